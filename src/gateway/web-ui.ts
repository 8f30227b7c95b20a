import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { Elysia } from "elysia";
import { NotFound, Unavailable } from "../errors";
import { bundleWebUi, type WebFile } from "./web-bundle";

/**
 * Where build.ts embeds the bundled UI (dist/webui, embedded under its basename). In the
 * binary import.meta.dir is the bundle root; from source this folder does not exist and the
 * UI is bundled in memory on the first request instead.
 */
const EMBEDDED = join(import.meta.dir, "webui");

/** Client-side routes: each answers index.html and the page script shows the screen. */
const PAGES = ["/", "/login", "/chat", "/memory", "/routines", "/activity", "/usage", "/egress"] as const;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

// Scripts and styles come only from this origin; model output can never run code even if
// something slipped past the sanitiser (inline handlers and inline scripts are refused).
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

interface Asset {
  body: Uint8Array;
  gzip: Uint8Array | null;
  etag: string;
  headers: Record<string, string>;
}

function asset(file: WebFile): Asset {
  const isPage = file.path.endsWith(".html");
  const type = TYPES[extname(file.path)] ?? "application/octet-stream";
  const compressible = type.startsWith("text/") || type === "image/svg+xml" || type === "application/json";
  const headers: Record<string, string> = {
    "content-type": type,
    "x-content-type-options": "nosniff",
    // index.html is revalidated every time; the files it names carry a content hash
    "cache-control": isPage ? "no-cache" : "public, max-age=31536000, immutable",
    vary: "accept-encoding",
  };
  if (isPage) {
    headers["content-security-policy"] = CSP;
    headers["referrer-policy"] = "no-referrer";
    headers["x-frame-options"] = "DENY";
  }
  return {
    body: file.bytes,
    gzip: compressible && file.bytes.length > 1024 ? Bun.gzipSync(file.bytes as Uint8Array<ArrayBuffer>) : null,
    etag: `"${Bun.hash(file.bytes).toString(36)}"`,
    headers,
  };
}

function readEmbedded(dir: string): WebFile[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((rel) => statSync(join(dir, rel)).isFile())
    .map((rel) => ({ path: `/${rel.split("\\").join("/")}`, bytes: new Uint8Array(readFileSync(join(dir, rel))) }));
}

let loading: Promise<Map<string, Asset>> | undefined;

/** The UI's files by URL path: the embedded copy in the binary, else bundled from source once. */
export function webAssets(): Promise<Map<string, Asset>> {
  loading ??= (async () => {
    const files = existsSync(join(EMBEDDED, "index.html")) ? readEmbedded(EMBEDDED) : await bundleWebUi();
    return new Map(files.map((f) => [f.path, asset(f)]));
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

function reply(a: Asset, request: Request): Response {
  if (request.headers.get("if-none-match") === a.etag) {
    return new Response(null, { status: 304, headers: { etag: a.etag, "cache-control": a.headers["cache-control"]! } });
  }
  const gzip = a.gzip && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  const headers = { ...a.headers, etag: a.etag, ...(gzip ? { "content-encoding": "gzip" } : {}) };
  return new Response(gzip ? a.gzip : a.body, { headers });
}

async function lookup(path: string): Promise<Asset | undefined> {
  let assets;
  try {
    assets = await webAssets();
  } catch (e) {
    throw new Unavailable(`The web UI is not available: ${(e as Error).message}`);
  }
  return assets.get(path);
}

/** The browser UI at / of the gateway. Public: these files hold no secret and need no token. */
export function webUiRoutes() {
  const page = async ({ request }: { request: Request }) => reply((await lookup("/index.html"))!, request);
  const app = new Elysia({ name: "web-ui" });
  for (const path of PAGES) app.get(path, page);
  return app.get("/assets/*", async ({ request, params }) => {
    const a = await lookup(`/assets/${params["*"]}`);
    if (!a) throw new NotFound("No such file.");
    return reply(a, request);
  });
}
