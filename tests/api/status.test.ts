// GET /api/status, unknown routes, and robustness against garbage: never a 500.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import pkg from "../../package.json" with { type: "json" };
import { startTestService, type TestService } from "../support/harness";

describe("status and routing", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("GET /api/status has the contract's shape", async () => {
    const res = await t.api("/api/status");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type") ?? "").toContain("application/json");
    const body = (await res.json()) as any;
    expect(body).toEqual({
      status: "ok",
      version: pkg.version,
      uptime_s: expect.any(Number),
      build: { version: pkg.version, commit: expect.stringMatching(/^[0-9a-f]{12}(-dirty)?$|^unknown$/), date: null },
      // the scripted LLM publishes no window: the default, and that is where it came from
      llm: { configured: true, model: "scripted-model", context_window: { tokens: 32768, source: "default", from: "default" }, streams: { limit: expect.any(Number), active: 0, waiting: 0 } },
      channels: { gateway: true, webhook: false, tui: false },
      revision: "B",
      mcp: { servers: [] },
      memory: { search: "full-text", embedding_model: null },
      event_loop: { max_pause_ms_5s: expect.any(Number), max_held_ms_5s: expect.any(Number) },
    });
    expect(Number.isInteger(body.uptime_s)).toBe(true);
    expect(body.uptime_s).toBeGreaterThanOrEqual(0);
  });

  test("per-user tokens may read the status too", async () => {
    const { token } = await t.createUser("member");
    const res = await t.api("/api/status", { token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("ok");
  });

  test("unknown routes → 404 JSON envelope", async () => {
    for (const [method, path] of [
      ["GET", "/nope"],
      ["GET", "/api/v2/responses"],
      ["POST", "/api/v1/nothing"],
      ["GET", "/api/webchat/v2/admin/nothing"],
      ["DELETE", "/api/v1/responses/resp_x/cancel/more"],
    ] as const) {
      const res = await t.api(path, { method });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type") ?? "").toContain("application/json");
      const body = (await res.json()) as any;
      expect(body).toEqual({ error: { message: expect.any(String), type: "not_found_error", code: null } });
    }
  });

  test("wrong methods on known paths are 404 or 405, never 500", async () => {
    const cases: [string, string][] = [
      ["GET", "/api/v1/responses"],
      ["PUT", "/api/v1/responses"],
      ["DELETE", "/api/v1/responses/resp_x"],
      ["PATCH", "/api/status"],
      ["POST", "/api/status"],
      ["PUT", "/api/webchat/v2/admin/users"],
      ["DELETE", "/api/webchat/v2/admin/users"],
      ["GET", "/v1/chat/completions"],
      ["POST", "/v1/models"],
      ["POST", "/health"],
      ["GET", "/api/v1/responses/resp_x/cancel"],
    ];
    for (const [method, path] of cases) {
      const res = await t.api(path, { method, body: method === "GET" ? undefined : "{}" });
      expect([404, 405]).toContain(res.status);
      expect(((await res.json()) as any).error.type).toBeString();
    }
  });

  test("garbage bodies are 4xx JSON envelopes, never 500", async () => {
    const random = crypto.getRandomValues(new Uint8Array(4096));
    const bodies: (string | Uint8Array)[] = [
      random,
      new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
      "\u0000\u0001\u0002",
      "{",
      "}{",
      "null",
      "[]",
      "42",
      '"string"',
      '{"input": ' + "[".repeat(5000) + "]".repeat(5000) + "}",
      "a=b&c=d",
    ];
    const targets = ["/api/v1/responses", "/v1/responses", "/api/webchat/v2/admin/users", "/v1/chat/completions", "/api/v1/responses/resp_abc/cancel"];
    for (const path of targets) {
      for (const body of bodies) {
        for (const contentType of ["application/json", "application/octet-stream", "text/plain"]) {
          const res = await t.api(path, { method: "POST", body: body as Bun.BodyInit, headers: { "content-type": contentType } });
          const text = await res.text();
          if (res.status >= 500 || res.status < 400) throw new Error(`${path} ${contentType}: ${res.status} ${text.slice(0, 200)}`);
          const parsed = JSON.parse(text);
          expect(typeof parsed.error.type).toBe("string");
        }
      }
    }
    expect(t.logs.filter((l) => l.includes("unexpected error"))).toEqual([]);
  });

  test("a body over 14 MiB → 413 JSON envelope", async () => {
    const big = new Uint8Array(14 * 1024 * 1024 + 10).fill(0x20);
    const res = await t.api("/api/v1/responses", { method: "POST", body: big, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(413);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("invalid_request_error");
    expect(t.llm.chatRequests().length).toBe(0);
    expect((await t.api("/health")).status).toBe(200);
  });

  test("garbage ids and paths are 4xx, never 500", async () => {
    for (const id of ["x", "resp_", "resp_zz", "resp_" + "f".repeat(64), "resp_" + "0".repeat(200), "%00", "..%2F..%2Fetc", "resp_%F0%9F%98%80"]) {
      const get = await t.api(`/api/v1/responses/${id}`);
      expect(get.status).toBe(404);
      const cancel = await t.api(`/api/v1/responses/${id}/cancel`, { method: "POST" });
      expect(cancel.status).toBeGreaterThanOrEqual(400);
      expect(cancel.status).toBeLessThan(500);
    }
  });

  test("a raw malformed HTTP request does not take the server down", async () => {
    await new Promise<void>((resolve, reject) => {
      const port = Number(new URL(t.url).port);
      const sock = connect(port, "127.0.0.1", () => sock.write("GARBAGE \x00\x01 nonsense\r\n\r\n"));
      sock.on("data", () => sock.destroy());
      sock.on("close", () => resolve());
      sock.on("error", reject);
    });
    expect((await t.api("/health")).status).toBe(200);
  });
});

describe("status with no LLM configured, revision A", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { LLM_MODEL: "", LLM_BASE_URL: "", LLM_API_KEY: "", RESPONSES_API_REVISION: "A" } });
  });
  afterAll(() => t.stop());

  test("llm.configured is false, model null, revision A", async () => {
    const body = (await (await t.api("/api/status")).json()) as any;
    expect(body.status).toBe("ok");
    expect(body.llm).toEqual({ configured: false, model: null, context_window: { tokens: 32768, source: "default", from: "default" }, streams: { limit: expect.any(Number), active: 0, waiting: 0 } });
    expect(body.revision).toBe("A");
  });

  test("it logged how to configure the LLM", () => {
    expect(t.logs.some((l) => l.includes("LLM_BASE_URL"))).toBe(true);
  });
});
