import { Elysia } from "elysia";
import { NotFound } from "../errors";
import { requireAuth } from "../http/auth";
import type { Services } from "../services";
import { isModelHint } from "./responses/request";

/**
 * GET /models: the model names a caller may send. Revision A takes only `default`; revision B
 * routes any name, and lists `default` and the configured models (primary, then fallbacks).
 * GET /models/{model} describes one name a caller may send: under revision B any well-formed
 * name (the routing hints POST /responses accepts), under A only `default`.
 */
export function modelRoutes(s: Services, prefix: string) {
  const revisionA = s.config.responses.revision === "A";
  const names = revisionA
    ? ["default"]
    : [...new Set(["default", s.config.llm.model, ...(s.config.llm.fallbacks ?? []).map((f) => f.model)].filter((m): m is string => Boolean(m)))];
  const created = Math.floor(s.startedAt / 1000);
  const model = (id: string) => ({ id, object: "model" as const, created, owned_by: "service" });
  const data = names.map(model);
  const accepted = (id: string) => (revisionA ? id === "default" : isModelHint(id));
  return new Elysia({ name: "models", seed: prefix, prefix })
    .use(requireAuth(s))
    .get("/models", () => ({ object: "list" as const, data }))
    .get("/models/:model", ({ params }) => {
      if (!accepted(params.model)) {
        throw new NotFound(`The model ${JSON.stringify(params.model)} does not exist here; GET ${prefix}/models lists the names to send.`);
      }
      return model(params.model);
    });
}
