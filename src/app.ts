import { Elysia } from "elysia";
import { InvalidRequest, NotFound, PayloadTooLarge, ServiceError } from "./errors";
import { adminRoutes } from "./api/admin/users";
import { errorResponse } from "./http/envelope";
import { MAX_BODY_BYTES } from "./http/body";
import { proxyRoutes } from "./api/proxy";
import { conversationRoutes } from "./api/conversations";
import { modelRoutes } from "./api/models";
import { jobsRoutes } from "./gateway/jobs";
import { egressRoutes } from "./gateway/egress";
import { usageRoutes } from "./gateway/usage";
import { metricsRoutes } from "./observability/metrics-route";
import { chatRoutes } from "./gateway/chat";
import { ChatEventHub } from "./gateway/events";
import { approvalRoutes } from "./gateway/approvals";
import { branchRoutes } from "./gateway/branches";
import { memoryRoutes } from "./gateway/memory";
import { extensionRoutes } from "./gateway/extensions";
import { webUiRoutes } from "./gateway/web-ui";
import { responsesApi } from "./api/responses/routes";
import { invalidBody, schemaOf } from "./http/validation";
import type { Services } from "./services";
import { statusRoutes } from "./api/status";
import { ssoRoutes } from "./auth/sso/routes";
import { routineRoutes } from "./routines/routes";

/** The gateway's HTTP app: every feature is a plugin; errors are mapped here and only here. */
export function createApp(s: Services) {
  const responses = responsesApi(s);
  // each user's turn events, for the web UI and the TUI (GET /api/chat/events)
  const events = new ChatEventHub(s.agent.bus, s.broadcast);
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
        return errorResponse(new PayloadTooLarge("14 MiB"));
      }
    })
    .onError({ as: "global" }, ({ code, error }) => {
      if (code === "NOT_FOUND") return errorResponse(new NotFound("No such route."));
      // a route's own body reader (http/body.ts) says what was wrong: too large, not JSON, ...
      if (code === "PARSE") {
        const cause = (error as Error).cause;
        return errorResponse(cause instanceof ServiceError ? cause : new InvalidRequest("The request body is not valid JSON."));
      }
      // a reply that breaks its route's declared `response` is the service's fault (500), not the caller's
      if (code === "VALIDATION" && error.type !== "response") return errorResponse(invalidBody(schemaOf(error.validator), error.value));
      return errorResponse(error, s.log);
    })
    .use(statusRoutes(s))
    .use(s.metrics ? metricsRoutes(s.metrics.metrics, s.metrics.tokens) : new Elysia({ name: "no-metrics" }))
    .use(openAiCompatible("/api/v1"))
    .use(openAiCompatible("/v1"))
    .use(adminRoutes(s))
    .use(ssoRoutes(s))
    .use(jobsRoutes(s))
    .use(egressRoutes(s))
    .use(usageRoutes(s))
    .use(chatRoutes(s, events))
    .use(approvalRoutes(s, events))
    .use(branchRoutes(s, events))
    .use(memoryRoutes(s))
    .use(extensionRoutes(s))
    .use(routineRoutes(s))
    .use(webUiRoutes());
}

export type App = ReturnType<typeof createApp>;
