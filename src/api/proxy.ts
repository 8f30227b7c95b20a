import { Elysia } from "elysia";
import { TurnError } from "../errors";
import { requireAuth } from "./auth";
import { readJsonObject } from "./body";
import { envelope } from "./envelope";
import type { Services } from "./services";

/** The raw model proxy: the caller's chat completion goes to the LLM as it is. No tools, memory or loop. */
export function proxyRoutes(s: Services) {
  return new Elysia({ name: "proxy" })
    .use(requireAuth(s))
    .post(
      "/v1/chat/completions",
      async ({ request }) => {
        const body = await readJsonObject(request);
        if (!Array.isArray(body.messages)) return envelope(400, "`messages` must be an array.", "invalid_request_error");
        try {
          const upstream = await s.llm.proxyChatCompletions(body, request.signal);
          const headers = new Headers({ "content-type": upstream.headers.get("content-type") ?? "application/json" });
          if (body.stream === true) headers.set("cache-control", "no-cache");
          return new Response(upstream.body, { status: upstream.status, headers });
        } catch (e) {
          const message = e instanceof TurnError ? e.message : `The language model failed: ${(e as Error).message}`;
          const code = e instanceof TurnError ? e.code : "llm_error";
          return envelope(code === "llm_not_configured" ? 503 : 502, message, "server_error", code);
        }
      },
      { parse: "none" },
    )
    .get("/v1/models", () => ({
      object: "list",
      data: [{ id: "default", object: "model", created: Math.floor(s.startedAt / 1000), owned_by: "service" }],
    }));
}
