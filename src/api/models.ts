import { Elysia } from "elysia";
import { requireAuth } from "../http/auth";
import type { Services } from "../services";

/**
 * GET /models: the model names a caller may send. Revision A takes only `default`; revision B
 * routes any name, and lists `default` and the configured models (primary, then fallbacks).
 */
export function modelRoutes(s: Services, prefix: string) {
  const names =
    s.config.responses.revision === "A"
      ? ["default"]
      : [...new Set(["default", s.config.llm.model, ...(s.config.llm.fallbacks ?? []).map((f) => f.model)].filter((m): m is string => Boolean(m)))];
  const created = Math.floor(s.startedAt / 1000);
  const data = names.map((id) => ({ id, object: "model" as const, created, owned_by: "service" }));
  return new Elysia({ name: "models", seed: prefix, prefix })
    .use(requireAuth(s))
    .get("/models", () => ({ object: "list" as const, data }));
}
