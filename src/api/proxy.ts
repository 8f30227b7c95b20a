import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { TurnError, UpstreamFailure } from "../errors";
import { authedJson, requireAuth } from "../http/auth";
import { UpstreamHttpError } from "../llm/types";
import type { Services } from "../services";

const ChatCompletionBody = Type.Object(
  {
    messages: Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, error: "must be a non-empty array of message objects." }),
  },
  { additionalProperties: true },
);

/** The envelope type of an upstream status the proxy relays. */
const TYPES: Record<number, string> = { 400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error" };

/**
 * The raw model proxy: the caller's chat completion goes to the LLM as it is. No tools,
 * memory or loop. Under `/v1/chat/completions` and `/api/v1/chat/completions`, so one base
 * URL serves the Responses API and this.
 */
export function proxyRoutes(s: Services, prefix: string) {
  return new Elysia({ name: "proxy", seed: prefix, prefix })
    .use(requireAuth(s))
    .post(
      "/chat/completions",
      async ({ body, request }) => {
        try {
          const upstream = await s.llm.proxyChatCompletions(body, request.signal);
          const headers = new Headers({ "content-type": upstream.headers.get("content-type") ?? "application/json" });
          if ((body as { stream?: unknown }).stream === true) headers.set("cache-control", "no-cache");
          return new Response(upstream.body, { status: upstream.status, headers });
        } catch (e) {
          if (e instanceof UpstreamHttpError) throw upstreamFailure(e);
          throw e instanceof TurnError ? UpstreamFailure.fromTurn(e) : e;
        }
      },
      { parse: authedJson(s), body: ChatCompletionBody },
    );
}

/**
 * An error answer of the LLM endpoint as the JSON envelope, with its short message. Its 4xx
 * status is kept (the request was at fault), except that a refused key (401, 403) is the
 * service's own failure, not the caller's token: that, and any 5xx, becomes 502.
 */
function upstreamFailure(e: UpstreamHttpError): UpstreamFailure {
  const status = e.status >= 500 || e.status === 401 || e.status === 403 ? 502 : e.status;
  const message = `The language model endpoint answered HTTP ${e.status}${e.detail ? `: ${e.detail}` : "."}`;
  return new UpstreamFailure(message, status, TYPES[e.status] ?? (status >= 500 ? "server_error" : "invalid_request_error"), "upstream_error");
}
