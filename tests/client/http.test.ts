// The one HTTP client of both chat UIs: what it sends, and how a failure reads.
import { afterAll, describe, expect, test } from "bun:test";
import { ApiError, ChatClient, ConnectionError } from "../../src/client/http";

const seen: { method: string; path: string; auth: string | null; body: string }[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    seen.push({ method: req.method, path: url.pathname + url.search, auth: req.headers.get("authorization"), body: await req.text() });
    switch (url.pathname) {
      case "/api/chat/threads":
        return Response.json({ threads: [{ id: "t1" }] });
      case "/api/chat/send":
        return Response.json({ message_id: "r", response_id: "r", thread_id: "t", status: "accepted" }, { status: 202 });
      case "/api/chat/threads/a%2Fb":
        return new Response(null, { status: 204 });
      case "/envelope":
        return Response.json({ error: { message: "No thread found.", type: "invalid_request_error", code: "not_found" } }, { status: 404 });
      case "/text":
        return new Response("plain words", { status: 400 });
      case "/html":
        return new Response("<html>proxy error</html>", { status: 502 });
      default:
        return new Response(null, { status: 401 });
    }
  },
});
const url = `http://127.0.0.1:${server.port}`;
afterAll(() => server.stop(true));

describe("ChatClient", () => {
  test("sends the token (read at each call) and JSON; answers the reply's JSON, or nothing for an empty body", async () => {
    let token: string | null = "one";
    const client = new ChatClient({ baseUrl: `${url}/`, token: () => token });
    expect(await client.threads()).toEqual([{ id: "t1" } as never]);
    token = "two";
    expect(await client.send("hi", "t")).toMatchObject({ response_id: "r", status: "accepted" });
    expect(await client.deleteThread("a/b")).toBeUndefined();
    token = null;
    await client.threads();
    expect(seen.slice(-4)).toEqual([
      { method: "GET", path: "/api/chat/threads", auth: "Bearer one", body: "" },
      { method: "POST", path: "/api/chat/send", auth: "Bearer two", body: '{"content":"hi","thread_id":"t"}' },
      { method: "DELETE", path: "/api/chat/threads/a%2Fb", auth: "Bearer two", body: "" },
      { method: "GET", path: "/api/chat/threads", auth: null, body: "" },
    ]);
  });

  test("a failure is an ApiError with the envelope's message and code, a short plain text, or a sentence", async () => {
    const client = new ChatClient({ baseUrl: url, token: "t" });
    const failure = (path: string) => client.request("GET", path).then(() => undefined, (e: unknown) => e as ApiError);
    expect(await failure("/envelope")).toMatchObject({ status: 404, message: "No thread found.", code: "not_found" });
    expect(await failure("/text")).toMatchObject({ status: 400, message: "plain words", code: undefined });
    expect(await failure("/html")).toMatchObject({ status: 502, message: "The service had a problem (HTTP 502)." });
    expect(await failure("/other")).toMatchObject({ status: 401, message: "The token was not accepted." });
    expect(await failure("/html")).toBeInstanceOf(ApiError);
  });

  test("401 tells the owner the token is no longer accepted; other failures do not", async () => {
    let calls = 0;
    const client = new ChatClient({ baseUrl: url, token: "t", onUnauthorized: () => calls++ });
    await client.request("GET", "/text").catch(() => {});
    expect(calls).toBe(0);
    await client.request("GET", "/other").catch(() => {});
    expect(calls).toBe(1);
  });

  test("an unreachable service is a ConnectionError (an ApiError with status 0) that says where", async () => {
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const at = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const e = await new ChatClient({ baseUrl: at, token: "t" }).status().catch((e: unknown) => e);
    expect(e).toBeInstanceOf(ConnectionError);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 0, message: `Cannot reach the service at ${at}. Check that it is running and try again.` });
  });

  test("takes the fetch to use", async () => {
    const urls: string[] = [];
    const client = new ChatClient({ baseUrl: "", token: "t", fetch: async (u) => (urls.push(u), Response.json({ threads: [] })) });
    expect(await client.threads()).toEqual([]);
    expect(urls).toEqual(["/api/chat/threads"]);
  });
});
