import { Elysia } from "elysia";
import { ServiceError } from "../errors";
import { adminRoutes } from "./admin/users";
import { envelope, errorResponse } from "./envelope";
import { MAX_BODY_BYTES } from "./body";
import { proxyRoutes } from "./proxy";
import { conversationRoutes } from "./conversations";
import { modelRoutes } from "./models";
import { jobsRoutes } from "../gateway/jobs";
import { chatRoutes } from "../gateway/chat";
import { approvalRoutes } from "../gateway/approvals";
import { memoryRoutes } from "../gateway/memory";
import { extensionRoutes } from "../gateway/extensions";
import { webUiRoutes } from "../gateway/web-ui";
import { responsesApi } from "./responses/routes";
import { describeInvalid, schemaOf } from "./validation";
import type { Services } from "./services";
import { statusRoutes } from "./status";

/** The gateway's HTTP app: every feature is a plugin; errors are mapped here and only here. */
export function createApp(s: Services) {
  const responses = responsesApi(s);
  // every OpenAI-style route answers under /api/v1 and under the legacy /v1 alike
  const openAiCompatible = (prefix: string) =>
    new Elysia({ name: "openai-compatible", seed: prefix })
      .use(responses(prefix))
      .use(conversationRoutes(s, prefix))
      .use(modelRoutes(s, prefix))
      .use(proxyRoutes(s, prefix));
  // Elysia finds the path after the 11th character of request.url by default, which assumes a
  // host of some length: with `Host: x`, GET /xx/health would be routed as /health. And it
  // "normalizes" bodies by default: drops fields a schema does not list, even where it allows
  // any (a caller's x_context), and makes an object of a string; bodies are taken as sent.
  return new Elysia({ handler: { standardHostname: false }, normalize: false })
    .onRequest(({ request }) => {
      if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES) {
        return envelope(413, "Request body is larger than 14 MiB", "invalid_request_error", "payload_too_large");
      }
    })
    .onError({ as: "global" }, ({ code, error }) => {
      if (code === "NOT_FOUND") return envelope(404, "No such route.", "not_found_error");
      // a route's own body reader (api/body.ts) says what was wrong: too large, not JSON, ...
      if (code === "PARSE") {
        const cause = (error as Error).cause;
        return cause instanceof ServiceError ? errorResponse(cause) : envelope(400, "The request body is not valid JSON.", "invalid_request_error");
      }
      if (code === "VALIDATION") return envelope(400, describeInvalid(schemaOf(error.validator), error.value), "invalid_request_error");
      return errorResponse(error, s.log);
    })
    .use(statusRoutes(s))
    .use(openAiCompatible("/api/v1"))
    .use(openAiCompatible("/v1"))
    .use(adminRoutes(s))
    .use(jobsRoutes(s))
    .use(chatRoutes(s))
    .use(approvalRoutes(s))
    .use(memoryRoutes(s))
    .use(extensionRoutes(s))
    .use(webUiRoutes());
}

export type App = ReturnType<typeof createApp>;
