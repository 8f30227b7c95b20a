// LLM requests that fail before any output are retried with backoff, honouring Retry-After
// within the turn's deadline, then the fallbacks are tried; a turn that still fails says which
// endpoint failed and how.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import OpenAI from "openai";
import { retryAfterMs, retryDelay, retryable } from "../../src/llm/retry";
import { startTestService, type TestService } from "../support/harness";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

/** A service whose config.json lists `fallbacks`. */
async function withFallbacks(primary: ScriptedLLM, fallbacks: unknown[], env: Record<string, string> = {}) {
  const home = join(mkdtempSync(join(tmpdir(), "service-retry-")), "home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ llm: { fallbacks } }));
  return startTestService({ keepHome: home, llm: primary, env: { LLM_MAX_RETRIES: "1", ...env } });
}

describe("retries", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { LLM_MAX_RETRIES: "3" } });
  });
  afterAll(() => t.stop());

  test("429 with Retry-After twice, then an answer: the turn completes, waiting as asked", async () => {
    t.llm.reset();
    const limited = { error: { status: 429, message: "slow down", headers: { "retry-after": "1" } } };
    t.llm.enqueue(limited, limited, { text: "Finally." });
    const r = await t.respond({ model: "m", input: "hello" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Finally.");
    const at = t.llm.chatRequests().map((q) => q.at);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(950);
  });

  test("a 5xx and a dropped connection before the first token are retried", async () => {
    t.llm.reset();
    t.llm.enqueue({ error: { status: 503 } }, { dropAfterChunks: 0, text: "lost" }, { text: "Third time lucky." });
    const r = await t.respond({ model: "m", input: "hello" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Third time lucky.");
    expect(t.llm.chatRequests()).toHaveLength(3);
  });

  test("400 and 401 are not retried", async () => {
    for (const status of [400, 401]) {
      t.llm.reset();
      t.llm.enqueue({ error: { status, message: "nope" } }, { text: "never" });
      const r = await t.respond({ model: "m", input: "hello" });
      expect(r.body.status).toBe("failed");
      expect(r.body.error.code).toBe("llm_error");
      expect(t.llm.chatRequests()).toHaveLength(1);
    }
  });

  test("retries stop at LLM_MAX_RETRIES; the message names the endpoint, the status and the tries", async () => {
    t.llm.reset();
    t.llm.respondWith(() => ({ error: { status: 500, message: "mock failure" } }));
    const r = await t.respond({ model: "m", input: "hello", stream: false });
    t.llm.respondWith(null);
    expect(t.llm.chatRequests()).toHaveLength(4);
    expect(r.body.status).toBe("failed");
    const host = new URL(t.llm.url).host;
    expect(r.body.error.message).toBe(
      `The language model at ${host} (model scripted-model) answered HTTP 500 (internal server error): mock failure (4 tries).`,
    );
    expect(r.body.error.message).not.toContain("500: 500");
  });

  test("a Retry-After beyond the turn's deadline is not waited for", async () => {
    const short = await startTestService({ env: { LLM_MAX_RETRIES: "3" }, turnTimeoutMs: 2_000 });
    try {
      short.llm.enqueue({ error: { status: 429, message: "come back later", headers: { "retry-after": "30" } } });
      const started = Date.now();
      const r = await short.respond({ model: "m", input: "hello" });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(r.body.status).toBe("failed");
      expect(r.body.error.code).toBe("llm_error");
      expect(r.body.error.message).toContain("HTTP 429 (rate limited): come back later");
      expect(short.llm.chatRequests()).toHaveLength(1);
    } finally {
      await short.stop();
    }
  });

  test("an upstream HTML error page never ends up in the message", async () => {
    const once = await startTestService({ env: { LLM_MAX_RETRIES: "0" } });
    const page = `<!DOCTYPE html><html><head><title>502</title></head><body>${"x".repeat(50_000)}</body></html>`;
    once.llm.enqueue({ error: { status: 502, body: page } });
    const r = await once.respond({ model: "m", input: "hello" });
    await once.stop();
    expect(r.body.status).toBe("failed");
    expect(r.body.error.message).toContain("answered HTTP 502 (bad gateway)");
    expect(r.body.error.message).not.toContain("<");
    expect(r.body.error.message.length).toBeLessThan(300);
  });
});

describe("fallbacks", () => {
  let primary: ScriptedLLM;
  let fallback: ScriptedLLM;
  beforeAll(async () => {
    primary = await startScriptedLLM();
    fallback = await startScriptedLLM();
  });
  afterAll(async () => {
    await primary.close();
    await fallback.close();
  });

  test("a primary that always fails: after its retries the fallback answers, with its own model", async () => {
    primary.respondWith(() => ({ error: { status: 500, message: "primary down" } }));
    fallback.enqueue({ text: "From the fallback." });
    const t = await withFallbacks(primary, [{ baseUrl: fallback.url, apiKey: "fk", model: "fallback-model" }]);
    try {
      const r = await t.respond({ model: "m", input: "hello" });
      expect(r.body.status).toBe("completed");
      expect(r.body.output[0].content[0].text).toBe("From the fallback.");
      expect(primary.chatRequests()).toHaveLength(2);
      expect(fallback.chatRequests()).toHaveLength(1);
      expect(fallback.lastChat().model).toBe("fallback-model");
      expect(fallback.chatRequests()[0]!.headers.authorization).toBe("Bearer fk");
    } finally {
      await t.stop();
      primary.reset();
      fallback.reset();
    }
  });

  test("a fallback's key is a secret of the service: never in a message, even when its provider quotes it", async () => {
    const key = "local-fallback-key-7f3a9c";
    primary.respondWith(() => ({ error: { status: 503, message: "overloaded" } }));
    fallback.respondWith(() => ({ error: { status: 500, message: `key ${key} is over its quota` } }));
    const t = await withFallbacks(primary, [{ baseUrl: fallback.url, apiKey: key, model: "fallback-model" }], { LLM_MAX_RETRIES: "0" });
    try {
      const r = await t.respond({ model: "m", input: "hello" });
      expect(r.body.status).toBe("failed");
      expect(r.body.error.message).toContain("is over its quota");
      expect(r.body.error.message).not.toContain(key);
      expect(t.logLines.join("\n")).not.toContain(key);
    } finally {
      await t.stop();
      primary.reset();
      fallback.reset();
    }
  });

  test("every endpoint fails: the message says which failed and how, in order", async () => {
    primary.respondWith(() => ({ error: { status: 503, message: "overloaded" } }));
    const dead = "http://127.0.0.1:9/v1"; // discard port: nothing listens
    const t = await withFallbacks(primary, [{ baseUrl: dead, model: "nowhere" }], { LLM_MAX_RETRIES: "0" });
    try {
      const r = await t.respond({ model: "m", input: "hello" });
      expect(r.body.status).toBe("failed");
      expect(r.body.error.code).toBe("llm_error");
      const host = new URL(primary.url).host;
      expect(r.body.error.message).toBe(
        `The language model at ${host} (model scripted-model) answered HTTP 503 (service unavailable): overloaded; then the fallback at 127.0.0.1:9 (model nowhere) could not be reached (connection refused).`,
      );
    } finally {
      await t.stop();
      primary.reset();
    }
  });
});

describe("retry rules", () => {
  const apiError = (status: number, headers: Record<string, string> = {}) => OpenAI.APIError.generate(status, { error: { message: "x" } }, undefined, new Headers(headers));

  test("what is retried", () => {
    for (const s of [408, 409, 429, 500, 502, 503, 504]) expect(retryable(apiError(s))).toBe(true);
    for (const s of [400, 401, 403, 404, 422]) expect(retryable(apiError(s))).toBe(false);
    expect(retryable(new OpenAI.APIConnectionError({ message: "refused" }))).toBe(true);
    expect(retryable(new OpenAI.APIUserAbortError())).toBe(false);
  });

  test("Retry-After in seconds, as a date, and retry-after-ms", () => {
    expect(retryAfterMs(apiError(429, { "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(apiError(429, { "retry-after-ms": "150" }))).toBe(150);
    const now = Date.parse("2026-11-24T10:00:00Z");
    expect(retryAfterMs(apiError(429, { "retry-after": "Tue, 24 Nov 2026 10:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(apiError(429))).toBeUndefined();
  });

  test("backoff doubles with jitter, waits at least what was asked, never past the deadline", () => {
    const at = (attempt: number, r: number) => retryDelay(attempt, apiError(500), { baseMs: 500, random: () => r })!;
    expect([at(0, 0), at(0, 1)]).toEqual([250, 500]);
    expect([at(2, 0), at(2, 1)]).toEqual([1000, 2000]);
    expect(at(10, 1)).toBe(8000); // capped
    expect(retryDelay(0, apiError(429, { "retry-after": "3" }), { baseMs: 500, random: () => 0 })).toBe(3000);
    expect(retryDelay(0, apiError(429, { "retry-after": "3" }), { baseMs: 500, deadline: Date.now() + 1000 })).toBeUndefined();
    expect(retryDelay(0, apiError(429, { "retry-after": "120" }), { baseMs: 500 })).toBeUndefined();
  });
});
