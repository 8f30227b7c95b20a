// The gateway's 14 MiB body limit answers the JSON envelope, however the body arrives.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";

const MiB = 1024 * 1024;
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

function expectTooLarge(status: number, body: any) {
  expect(status).toBe(413);
  expect(body).toEqual({ error: { message: "Request body is larger than 14 MiB", type: "invalid_request_error", code: "payload_too_large" } });
}

for (const size of [14 * MiB + 1, 15 * MiB, 40 * MiB]) {
  test(`a declared body of ${size} bytes`, async () => {
    const res = await t.api("/api/v1/responses", { method: "POST", body: JSON.stringify({ model: "m", input: "z".repeat(size) }), headers: { "content-type": "application/json" } });
    expectTooLarge(res.status, await res.json());
  });
}

test("a chunked body over 14 MiB, on the Responses route and on a local endpoint", async () => {
  for (const path of ["/api/v1/responses", "/api/memory/write", "/v1/chat/completions"]) {
    const chunk = new Uint8Array(MiB).fill(0x7a);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 16) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await t.api(path, { method: "POST", body, headers: { "content-type": "application/json" } });
    expectTooLarge(res.status, await res.json());
  }
  expect(t.llm.chatRequests()).toHaveLength(0);
});

test("a body just under the limit is read", async () => {
  const res = await t.api("/api/v1/responses", { method: "POST", json: { model: "m", input: "z".repeat(14 * MiB - 100) } });
  // read and parsed: then refused because no model's context holds 14 MiB of input (not a 413)
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("context_length_exceeded");
});

test("a body is read the same whether its length is declared or it comes chunked", async () => {
  const json = JSON.stringify({ model: "m", input: "Say hello." });
  const chunked = () => {
    const bytes = new TextEncoder().encode(json);
    let at = 0;
    return new ReadableStream<Uint8Array>({
      pull(c) {
        if (at < bytes.length) c.enqueue(bytes.subarray(at, (at += 7)));
        else c.close();
      },
    });
  };
  for (const body of [json, chunked()]) {
    const res = await t.api("/api/v1/responses", { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
  }
  // bytes that are not UTF-8 are refused, declared or chunked
  const bad = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]);
  const once = () => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(bad), c.close()) });
  for (const body of [bad, once()]) {
    const res = await t.api("/api/v1/responses", { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("UTF-8");
  }
});
