import OpenAI from "openai";

/** Statuses worth another try: the request may well succeed a moment later. */
const RETRYABLE_STATUS = new Set([408, 409, 429]);
/** Retry-After beyond this gives up on the endpoint: a turn should not wait minutes. */
const MAX_WAIT_MS = 60_000;
const BACKOFF_CAP_MS = 8_000;

/** Connection errors and 408, 409, 429 and 5xx answers, never a cancelled request. */
export function retryable(e: unknown): boolean {
  if (e instanceof OpenAI.APIUserAbortError) return false;
  if (e instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (e instanceof OpenAI.APIError) return e.status === undefined || RETRYABLE_STATUS.has(e.status) || e.status >= 500;
  return true; // a stream torn down before its first chunk (socket reset) is a connection failure
}

/** How long the provider asked us to wait (`retry-after-ms`, `retry-after` in seconds or as a date). */
export function retryAfterMs(e: unknown, now = Date.now()): number | undefined {
  const headers = e instanceof OpenAI.APIError ? (e.headers as Headers | undefined) : undefined;
  const ms = Number(headers?.get?.("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get?.("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/**
 * The wait before retry `attempt` (0-based): exponential from `baseMs` with full jitter over
 * its upper half, but never less than what the provider asked for. Undefined when the wait
 * would pass the deadline or the provider asks for more than a minute.
 */
export function retryDelay(attempt: number, e: unknown, opts: { baseMs: number; deadline?: number; random?: () => number }): number | undefined {
  const backoff = Math.min(opts.baseMs * 2 ** attempt, BACKOFF_CAP_MS);
  const jittered = backoff / 2 + (opts.random ?? Math.random)() * (backoff / 2);
  const asked = retryAfterMs(e);
  const wait = Math.max(jittered, asked ?? 0);
  if (asked !== undefined && asked > MAX_WAIT_MS) return undefined;
  if (opts.deadline !== undefined && Date.now() + wait >= opts.deadline) return undefined;
  return wait;
}

/** Sleeps `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** What went wrong with one endpoint, in words a person understands. */
export function describeFailure(e: unknown): string {
  if (e instanceof OpenAI.APIConnectionTimeoutError) return "did not answer in time";
  if (e instanceof OpenAI.APIConnectionError) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code === "ECONNREFUSED" || /refused/i.test(cause?.message ?? "") ? "connection refused" : (cause?.code ?? cause?.message);
    return `could not be reached${why ? ` (${why})` : ""}`;
  }
  if (e instanceof OpenAI.APIError && e.status) {
    const detail = providerMessage(e);
    return `answered HTTP ${e.status}${STATUS_TEXT[e.status] ? ` (${STATUS_TEXT[e.status]})` : ""}${detail ? `: ${detail}` : ""}`;
  }
  return (e as Error)?.message ? `failed: ${(e as Error).message}` : `failed: ${String(e)}`;
}

const STATUS_TEXT: Record<number, string> = {
  400: "bad request",
  401: "the API key was refused",
  403: "access denied",
  404: "not found: check the base URL and the model name",
  408: "request timeout",
  409: "conflict",
  413: "request too large",
  422: "the request was not accepted",
  429: "rate limited",
  500: "internal server error",
  502: "bad gateway",
  503: "service unavailable",
  504: "gateway timeout",
};

/** The provider's own message, short, and never an HTML page. */
export function providerMessage(e: InstanceType<typeof OpenAI.APIError>): string {
  const body = e.error as { message?: unknown } | string | undefined;
  // without a JSON body the SDK puts the raw text in the message, after the status
  let text =
    typeof body === "string" ? body : typeof body?.message === "string" ? body.message : body ? "" : e.message.replace(/^\d{3}\s*/, "");
  if (/<\s*(html|!doctype|body|head)\b/i.test(text) || /^status code \(no body\)$/.test(text)) return "";
  text = text.replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
