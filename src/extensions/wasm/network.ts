/** The most of a response body a module is given; the rest is cut. */
export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;

/** What the host adds to every request of a module (never visible to the module itself). */
export interface Injection {
  headers?: Record<string, string>;
  query?: { name: string; value: string };
}

/** The JSON a module gets back from `host.http_get`. */
export type HttpReply = { status: number; body: string; truncated?: true } | { error: string };

/**
 * Whether the allowlist lets a module reach this URL: `api.example.com` (any port),
 * `*.example.com` (its subdomains), `127.0.0.1:8080` (that port only). Only http and https.
 */
export function isAllowed(url: URL, allow: string[]): boolean {
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return allow.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith("*.")) return host.endsWith(entry.slice(1)) && host.length > entry.length - 1;
    const e = new URL(`http://${entry}`);
    if (e.hostname !== host) return false;
    // `host:80` spelled out is dropped by URL as the default port: compare the text too
    const wanted = e.port || (/:(\d+)$/.exec(entry)?.[1] ?? "");
    return !wanted || wanted === port;
  });
}

/**
 * GET for a module: the allowlist is checked for the URL and for every redirect, the
 * credentials are added, the body is cut at MAX_BODY_BYTES. Never throws: a failure is an
 * `{error}` reply the module can read.
 */
export async function sandboxedGet(rawUrl: string, allow: string[], inject: Injection, signal: AbortSignal): Promise<HttpReply> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { error: `not a URL: ${rawUrl.slice(0, 200)}` };
  }
  for (let hop = 0; ; hop++) {
    if (!isAllowed(url, allow)) {
      return { error: `${url.protocol}//${url.host} is not on this extension's network allowlist` };
    }
    const target = new URL(url);
    if (inject.query) target.searchParams.set(inject.query.name, inject.query.value);
    let res: Response;
    try {
      res = await fetch(target, { redirect: "manual", signal, headers: { ...inject.headers } });
    } catch (e) {
      if (signal.aborted) return { error: "the request was cancelled: the call ran out of time" };
      return { error: `the request failed: ${(e as Error).message}` };
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) return { error: `more than ${MAX_REDIRECTS} redirects` };
      url = new URL(location, url);
      continue;
    }
    return readBody(res);
  }
}

async function readBody(res: Response): Promise<HttpReply> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const room = MAX_BODY_BYTES - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length >= room) {
        truncated = value.length > room || !(await reader.read()).done;
        await reader.cancel().catch(() => {});
        break;
      }
    }
  }
  const body = new TextDecoder().decode(Buffer.concat(chunks));
  return truncated ? { status: res.status, body, truncated: true } : { status: res.status, body };
}
