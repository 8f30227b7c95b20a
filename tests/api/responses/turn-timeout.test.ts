// RESPONSES_TURN_TIMEOUT_S (config `responses.turnTimeoutS`): the non-streaming Responses
// timeout and POST /api/chat's, for a model slower than the spec's 30 s (revision B); unset,
// the revision's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";

describe("RESPONSES_TURN_TIMEOUT_S=1 with a model step that takes 3 s", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_TURN_TIMEOUT_S: "1" } });
  });
  afterAll(() => t.stop());

  test("a non-streaming Responses turn fails with turn_timeout after about a second", async () => {
    t.llm.enqueue({ text: "Too slow.", delayMs: 3_000 });
    const started = performance.now();
    const r = await t.respond({ model: "m", input: "think hard" });
    const elapsed = performance.now() - started;
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("turn_timeout");
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2_900);
  });

  test("POST /api/chat uses it too", async () => {
    t.llm.enqueue({ text: "Too slow.", delayMs: 3_000 });
    const started = performance.now();
    const res = await t.api("/api/chat", { method: "POST", json: { message: "think hard" } });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe("failed");
    expect(body.error.code).toBe("turn_timeout");
    expect(elapsed).toBeLessThan(2_900);
  });

  test("a step within it completes", async () => {
    t.llm.enqueue({ text: "Quick.", delayMs: 100 });
    const r = await t.respond({ model: "m", input: "quick one" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Quick.");
  });
});

describe("the timeout in force", () => {
  test("unset, the revision's (B 30 s, A 120 s); set, what it says", async () => {
    for (const [env, ms] of [
      [{}, 30_000],
      [{ RESPONSES_API_REVISION: "A" }, 120_000],
      [{ RESPONSES_API_REVISION: "A", RESPONSES_TURN_TIMEOUT_S: "600" }, 600_000],
    ] as [Record<string, string>, number][]) {
      const t = await startTestService({ env });
      try {
        expect(t.service.services.turnTimeoutMs).toBe(ms);
      } finally {
        await t.stop();
      }
    }
  });
});
