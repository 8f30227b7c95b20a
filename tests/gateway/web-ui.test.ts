// Serving the web UI from source (the in-memory bundle): pages, assets, headers, no secrets.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(t.url + path, { headers });

describe("web UI serving", () => {
  test("/ and the client routes answer index.html without a token, revalidated every time", async () => {
    for (const path of ["/", "/login", "/memory", "/chat", `/login?token=${t.token}`, "/?thread=x"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await res.text();
      expect(html).toContain('<div id="app">');
      expect(html).not.toContain(t.token);
    }
  });

  test("assets are content-hashed, typed, cached for good and gzipped when asked", async () => {
    const html = await (await get("/")).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const js = await get(script!, { "accept-encoding": "gzip" });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("content-encoding")).toBe("gzip");
    const code = await js.text(); // fetch decodes gzip
    expect(code).toContain("/api/chat/events");
    expect(code).not.toContain(t.token);
    const css = await get(style!);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");

    const etag = js.headers.get("etag")!;
    const again = await get(script!, { "if-none-match": etag });
    expect(again.status).toBe(304);
  });

  test("unknown assets and API routes stay JSON 404s; API routes still need the token", async () => {
    const missing = await get("/assets/nope.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.type).toBe("not_found_error");
    expect((await get("/api/nothing-here")).status).toBe(404);
    expect((await get("/api/chat/threads")).status).toBe(401);
  });
});
