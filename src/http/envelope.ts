import { AuthFailure, RateLimited, ServiceError, Unavailable } from "../errors";
import type { Logger } from "../log";
import { storeUnavailable } from "../store/db";

/** The one place errors become HTTP: plain text for auth failures, the JSON envelope otherwise. */
export function errorResponse(error: unknown, log?: Logger): Response {
  // the database is locked, full or read-only: the service's trouble, said as such, and it passes
  const down = error instanceof ServiceError ? undefined : storeUnavailable(error);
  if (down) return errorResponse(new Unavailable(`The database is unavailable: ${down}`), log);
  if (error instanceof AuthFailure) {
    return new Response(error.message, { status: error.status, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  if (error instanceof ServiceError) {
    // the service failed (the store, the model behind the proxy): an operator needs to see it
    if (error.status >= 500) log?.error("request failed", { status: error.status, code: error.code, error: error.message });
    const headers: Record<string, string> = {};
    if (error instanceof RateLimited) headers["retry-after"] = String(error.retryAfterS);
    return envelope(error.status, error.message, error.type, error.code, headers);
  }
  (log?.error ?? console.error)(`unexpected error: ${(error as Error)?.stack ?? String(error)}`);
  return envelope(500, "Internal server error", "server_error", null);
}

function envelope(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ error: { message, type, code } }, { status, headers });
}
