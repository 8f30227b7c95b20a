// The requests a module makes through `host.http_get`, made by the service: the allow list
// is checked first, then the private-address guard of `web_fetch` (the host is resolved only
// once it is allowed, and the connection goes to the address that was checked), and the
// credential is added only for the hosts the manifest binds it to.
import { checkHost, fetchPinned, type WebAccess } from "../../tools/builtin/web-guard";
import { isAllowed } from "../hosts";

/** The most of a response body a module is given; the rest is cut. */
export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;
const HIDDEN = "[REDACTED:credential]";

/** A credential the host adds to a module's requests to its hosts (the module never sees it). */
export interface BoundCredential {
  /** Host patterns, as in the allow list; a request to any other host goes without it. */
  hosts: string[];
  header?: { name: string; value: string };
  query?: { name: string; value: string };
  /** The secret in it, kept out of everything the module gets back. */
  secret: string;
}

export interface NetworkPolicy {
  /** The manifest's `runtime.network.allow`. */
  allow: string[];
  /** The operator's `tools.web`: which private hosts may be reached. */
  access: WebAccess;
  credential?: BoundCredential;
}

/** The JSON a module gets back from `host.http_get`. */
export type HttpReply = { status: number; body: string; truncated?: true } | { error: string };

/**
 * Replaces a secret in text, as sent and as a server may echo it (URL- and form-encoded, JSON
 * string escaped). `span` is the longest form in UTF-8 bytes: text read that far past a cut
 * holds any form that starts before it whole.
 */
export function secretHider(secret: string | undefined): { hide: (text: string) => string; span: number } {
  if (!secret) return { hide: (t) => t, span: 0 };
  const forms = [...new Set([secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)])];
  forms.sort((a, b) => b.length - a.length);
  return {
    hide: (text) => forms.reduce((t, form) => t.replaceAll(form, HIDDEN), text),
    span: Math.max(...forms.map((f) => Buffer.byteLength(f))),
  };
}

/**
 * GET for a module. Every hop (redirects too) is checked against the allow list and then the
 * private-address guard; the credential goes only to its bound hosts, and never on to a
 * redirect that carries it in its URL. The body is cut at MAX_BODY_BYTES, and the credential
 * is hidden from it and from error messages. Never throws: a failure is an `{error}` reply.
 */
export async function sandboxedGet(rawUrl: string, policy: NetworkPolicy, signal: AbortSignal): Promise<HttpReply> {
  const { credential } = policy;
  const hider = secretHider(credential?.secret);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { error: hider.hide(`not a URL: ${rawUrl.slice(0, 200)}`) };
  }
  for (let hop = 0; ; hop++) {
    if (!isAllowed(url, policy.allow)) {
      return { error: `${url.protocol}//${url.host} is not on this extension's network allowlist` };
    }
    const bound = credential !== undefined && isAllowed(url, credential.hosts);
    const target = new URL(url);
    if (bound && credential.query) target.searchParams.set(credential.query.name, credential.query.value);
    let res: Response;
    try {
      const checked = await checkHost(url.hostname, policy.access);
      res = await fetchPinned(target, checked, { headers: bound && credential.header ? { [credential.header.name]: credential.header.value } : {}, signal });
    } catch (e) {
      if (signal.aborted) return { error: "the request was cancelled: the call ran out of time" };
      return { error: hider.hide(`the request failed: ${(e as Error).message}`) };
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) return { error: `more than ${MAX_REDIRECTS} redirects` };
      const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
      if (!next) return { error: hider.hide(`the redirect to ${location.slice(0, 200)} is not a URL`) };
      if (hider.hide(next.href) !== next.href) {
        return { error: `${url.host} redirected with the extension's credential in the URL; the redirect was not followed` };
      }
      url = next;
      continue;
    }
    return readBody(res, hider);
  }
}

/**
 * The body, its credential hidden, cut at MAX_BODY_BYTES. It is read `span` bytes past the
 * cut and hidden before cutting, so no cut can leave the start of a credential behind.
 */
async function readBody(res: Response, hider: ReturnType<typeof secretHider>): Promise<HttpReply> {
  const limit = MAX_BODY_BYTES + hider.span;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let more = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const room = limit - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length >= room) {
        more = value.length > room || !(await reader.read()).done;
        await reader.cancel().catch(() => {});
        break;
      }
    }
  }
  const body = hider.hide(new TextDecoder().decode(Buffer.concat(chunks)));
  if (!more && size <= MAX_BODY_BYTES) return { status: res.status, body };
  return { status: res.status, body: new TextDecoder().decode(Buffer.from(body).subarray(0, MAX_BODY_BYTES)), truncated: true };
}
