import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { TurnError, UpstreamFailure } from "../errors";
import { authedJson, requireAuth } from "../http/auth";
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
          if (!upstream.ok) throw await upstreamError(upstream);
          const headers = new Headers({ "content-type": upstream.headers.get("content-type") ?? "application/json" });
          if ((body as { stream?: unknown }).stream === true) headers.set("cache-control", "no-cache");
          return new Response(upstream.body, { status: upstream.status, headers });
        } catch (e) {
          throw e instanceof TurnError ? UpstreamFailure.fromTurn(e) : e;
        }
      },
      { parse: authedJson(s), body: ChatCompletionBody },
    );
}

/**
 * An error answer of the LLM endpoint as the JSON envelope, with a short message: the
 * provider's own when it gave one, never its HTML page. Its 4xx status is kept (the request
 * was at fault); a 5xx becomes 502.
 */
async function upstreamError(upstream: Response): Promise<UpstreamFailure> {
  const text = await upstream.text().catch(() => "");
  let detail: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof m === "string") detail = m;
  } catch {}
  // an APIError wrapped by the SDK quotes the body after the status: "502 <html>..."
  if (detail && /<(!doctype|html|head|body)\b/i.test(detail)) detail = undefined;
  detail = detail?.replace(/\s+/g, " ").trim().slice(0, 300);
  // the service's own key refused upstream (401, 403) is the service's failure, not the caller's token
  const status = upstream.status >= 500 || upstream.status === 401 || upstream.status === 403 ? 502 : upstream.status;
  const message = `The language model endpoint answered HTTP ${upstream.status}${detail ? `: ${detail}` : "."}`;
  return new UpstreamFailure(message, status, TYPES[upstream.status] ?? (status >= 500 ? "server_error" : "invalid_request_error"), "upstream_error");
}
