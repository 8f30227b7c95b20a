import { Type } from "@sinclair/typebox";
import { VERSION } from "../../version";
import { defineTool, type Tool } from "../tool";
import { decodeText, formatBytes, parseContentType, readLimited } from "./http-read";
import { checkHost, fetchPinned, type Resolve, type WebAccess } from "./web-guard";

export const WEB_FETCH_TIMEOUT_MS = 15_000;
export const WEB_FETCH_MAX_BYTES = 2 * 1024 * 1024;
export const WEB_FETCH_MAX_REDIRECTS = 5;

export interface WebFetchOptions {
  /** For the whole fetch: every hop and the body. */
  timeoutMs?: number;
  /** Bytes of the final body read; the rest is dropped with a note. */
  maxBytes?: number;
  /** Extra certificate authorities (PEM) trusted for https, besides the system's. */
  ca?: string;
  /** How host names are resolved (tests count the lookups); default the system resolver. */
  resolve?: Resolve;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The parsed URL when it is http(s); otherwise a clear refusal. */
function httpUrl(text: string, what = "the URL"): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${what} is not a valid absolute URL: ${text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${what} uses ${url.protocol.replace(/:$/, "")}: only http and https can be fetched`);
  }
  return url;
}

/** One GET to the address checkHost approved for the URL's host (see fetchPinned). */
async function pinnedGet(url: URL, access: WebAccess, signal: AbortSignal, opts: WebFetchOptions): Promise<Response> {
  const checked = await checkHost(url.hostname, access, opts.resolve);
  const headers = {
    "user-agent": `service-web-fetch/${VERSION}`,
    accept: "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5",
  };
  try {
    return await fetchPinned(url, checked, { headers, signal, ca: opts.ca });
  } catch (e) {
    if (signal.aborted) throw e;
    const err = e as { code?: string; message?: string };
    throw new Error(`cannot connect to ${url.host}: ${err?.code ?? err?.message ?? String(e)}`);
  }
}

type Kind = "html" | "text" | "binary";

function kindOf(mime: string, bytes: Uint8Array): Kind {
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime.startsWith("text/") || /[/+](json|xml|javascript|ecmascript|x-ndjson|yaml|csv)$/.test(mime)) return "text";
  if (mime && mime !== "application/octet-stream") return "binary";
  // no useful type: look at the bytes
  const head = bytes.subarray(0, 4096);
  if (head.includes(0)) return "binary";
  return /^\s*<(!doctype html|html)/i.test(new TextDecoder().decode(head.subarray(0, 512))) ? "html" : "text";
}

/** The host (and port) a URL sends its request to, as an approval names it. */
export function destinationHost(url: string): string {
  try {
    return new URL(url.trim()).host || url.slice(0, 200);
  } catch {
    return url.slice(0, 200);
  }
}

export function webFetchTool(access: WebAccess, opts: WebFetchOptions = {}): Tool {
  const timeoutMs = opts.timeoutMs ?? WEB_FETCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? WEB_FETCH_MAX_BYTES;
  return defineTool({
    name: "web_fetch",
    description:
      "Fetch a web page or file over http(s) with GET and return it as text: HTML pages as readable text " +
      `(headings, paragraphs, lists, links), JSON and plain text as is. At most ${formatBytes(maxBytes)} is read; ` +
      `redirects are followed (up to ${WEB_FETCH_MAX_REDIRECTS}). Private and local network addresses are refused.`,
    parameters: Type.Object({
      url: Type.String({ minLength: 1, maxLength: 8192, description: "Absolute http:// or https:// URL" }),
    }),
    // a page is anyone's text; and the URL itself carries whatever is put in it to its host
    untrusted: true,
    egress: ({ url }) => destinationHost(url),
    async execute({ url }, ctx) {
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let current = httpUrl(url.trim());
      try {
        for (let redirects = 0; ; redirects++) {
          const res = await pinnedGet(current, access, signal, opts);
          const location = res.headers.get("location");
          if (REDIRECTS.has(res.status) && location) {
            await res.body?.cancel().catch(() => {});
            if (redirects === WEB_FETCH_MAX_REDIRECTS) {
              throw new Error(`too many redirects (more than ${WEB_FETCH_MAX_REDIRECTS}), last to ${location}`);
            }
            current = httpUrl(new URL(location, current).href, "a redirect");
            continue;
          }
          return await describe(current, res, maxBytes);
        }
      } catch (e) {
        if (signal.aborted && !ctx.signal.aborted) {
          throw new Error(`timed out after ${timeoutMs / 1000} s fetching ${current.href}`);
        }
        throw e;
      }
    },
  });
}

/** The response as text for the model, with a short header of what was fetched. */
async function describe(url: URL, res: Response, maxBytes: number): Promise<string> {
  const { bytes, truncated } = await readLimited(res, maxBytes);
  const contentType = res.headers.get("content-type");
  const { mime, charset } = parseContentType(contentType);
  const kind = kindOf(mime, bytes);
  if (kind === "binary") {
    throw new Error(`${url.href} is ${mime || "binary data"}, not text: web_fetch returns only HTML, JSON and text`);
  }
  const header = [`URL: ${url.href}`, `Status: ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`];
  if (contentType) header.push(`Content-Type: ${contentType}`);
  let body = decodeText(bytes, charset);
  if (kind === "html") {
    // loaded on first use: html-to-text is large and most services rarely fetch pages
    const { htmlToText } = require("./html-text") as typeof import("./html-text");
    const page = htmlToText(body, url.href);
    if (page.title) header.push(`Title: ${page.title}`);
    body = page.text;
  }
  if (truncated) header.push(`[truncated: the response is larger than ${formatBytes(maxBytes)}; only the first ${formatBytes(maxBytes)} was read]`);
  return `${header.join("\n")}\n\n${body || "(empty body)"}`;
}
