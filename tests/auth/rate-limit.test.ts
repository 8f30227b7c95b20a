// The per-user rate limit of Responses POST: over HTTP with a small limit, and the sliding
// window of RateLimiter with an injected clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RateLimiter } from "../../src/rate-limit";
import { startTestService, type TestService } from "../support/harness";

const ok = { model: "m", input: "hi" };

describe("RESPONSES_RATE_LIMIT=3", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_RATE_LIMIT: "3" } });
  });
  afterAll(() => t.stop());

  test("the 4th POST within 60 s is 429 rate_limit_error with retry-after; other users still pass", async () => {
    const a = await t.createUser("member");
    const b = await t.createUser("member");
    for (let i = 0; i < 3; i++) {
      const r = await t.respond(ok, a.token);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("completed");
    }
    const llmCalls = t.llm.chatRequests().length;

    const res = await t.api("/api/v1/responses", { method: "POST", json: ok, token: a.token });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = (await res.json()) as any;
    expect(body).toEqual({ error: { message: expect.any(String), type: "rate_limit_error", code: null } });
    expect(body.error.message.length).toBeGreaterThan(0);

    // the legacy alias shares the budget, and the limited request never reached the model
    const alias = await t.api("/v1/responses", { method: "POST", json: ok, token: a.token });
    expect(alias.status).toBe(429);
    expect(alias.headers.get("retry-after")).not.toBeNull();
    expect(t.llm.chatRequests().length).toBe(llmCalls);

    // another user has a budget of their own
    for (let i = 0; i < 3; i++) expect((await t.respond(ok, b.token)).status).toBe(200);
    expect((await t.respond(ok, b.token)).status).toBe(429);
  });

  test("reads are not limited; the instance owner has a separate budget", async () => {
    const first = await t.respond(ok);
    expect(first.status).toBe(200);
    for (let i = 0; i < 5; i++) {
      expect((await t.api(`/api/v1/responses/${first.body.id}`)).status).toBe(200);
      expect((await t.api("/api/status")).status).toBe(200);
    }
    expect((await t.respond(ok)).status).toBe(200);
    expect((await t.respond(ok)).status).toBe(200);
    const fourth = await t.respond(ok);
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.type).toBe("rate_limit_error");
  });

  test("unauthenticated requests are refused before they could use anyone's budget", async () => {
    const c = await t.createUser("member");
    for (let i = 0; i < 5; i++) {
      expect((await t.api("/api/v1/responses", { method: "POST", json: ok, token: "bad" })).status).toBe(401);
    }
    expect((await t.respond(ok, c.token)).status).toBe(200);
  });
});

describe("RESPONSES_RATE_LIMIT=0", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_RATE_LIMIT: "0" } });
  });
  afterAll(() => t.stop());

  test("turns the limit off", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++) statuses.push((await t.respond(ok)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});

describe("RateLimiter sliding window", () => {
  test("allows `limit` events, then answers the seconds until the oldest leaves the window", () => {
    const rl = new RateLimiter(3, 60_000);
    expect(rl.take("u", 0)).toBe(0);
    expect(rl.take("u", 1_000)).toBe(0);
    expect(rl.take("u", 2_000)).toBe(0);
    expect(rl.take("u", 3_000)).toBe(57);
    expect(rl.take("u", 59_999)).toBe(1);
    // the first event (t=0) leaves the window at t=60 000
    expect(rl.take("u", 60_000)).toBe(0);
    expect(rl.take("u", 60_001)).toBe(1); // next to leave: t=1 000 at 61 000
    expect(rl.take("u", 61_000)).toBe(0);
  });

  test("refused events are not counted", () => {
    const rl = new RateLimiter(2, 10_000);
    expect(rl.take("u", 0)).toBe(0);
    expect(rl.take("u", 0)).toBe(0);
    for (let t = 1; t < 10_000; t += 997) expect(rl.take("u", t)).toBeGreaterThan(0);
    // had the refusals counted, the window would still be full
    expect(rl.take("u", 10_000)).toBe(0);
    expect(rl.take("u", 10_000)).toBe(0);
    expect(rl.take("u", 10_000)).toBeGreaterThan(0);
  });

  test("the window slides: it is not a fixed minute", () => {
    const rl = new RateLimiter(3, 60_000);
    rl.take("u", 0);
    rl.take("u", 30_000);
    rl.take("u", 50_000);
    expect(rl.take("u", 59_000)).toBe(1);
    expect(rl.take("u", 60_000)).toBe(0); // t=0 left
    // now 30 000, 50 000, 60 000 are in the window: full until 90 000
    expect(rl.take("u", 60_001)).toBe(30);
    expect(rl.take("u", 89_999)).toBe(1);
    expect(rl.take("u", 90_000)).toBe(0);
  });

  test("keys are independent", () => {
    const rl = new RateLimiter(1, 60_000);
    expect(rl.take("a", 0)).toBe(0);
    expect(rl.take("a", 1)).toBeGreaterThan(0);
    expect(rl.take("b", 1)).toBe(0);
    expect(rl.take("c", 1)).toBe(0);
    expect(rl.take("b", 2)).toBeGreaterThan(0);
  });

  test("retry-after is at least 1 s and rounds up", () => {
    const rl = new RateLimiter(1, 60_000);
    rl.take("u", 0);
    expect(rl.take("u", 59_999)).toBe(1);
    expect(rl.take("u", 58_500)).toBe(2);
    expect(rl.take("u", 1)).toBe(60);
  });

  test("a limit of 0 is off", () => {
    const rl = new RateLimiter(0, 60_000);
    for (let i = 0; i < 1_000; i++) expect(rl.take("u", 5)).toBe(0);
  });

  test("defaults to a 60 s window", () => {
    const rl = new RateLimiter(1);
    expect(rl.take("u", 1_000_000)).toBe(0);
    expect(rl.take("u", 1_059_999)).toBe(1);
    expect(rl.take("u", 1_060_000)).toBe(0);
  });

  test("many idle keys are swept without losing active ones", () => {
    const rl = new RateLimiter(1, 1_000);
    for (let i = 0; i < 10_001; i++) rl.take(`k${i}`, 0);
    rl.take("active", 5_000); // past the window of every other key: triggers a sweep
    expect(rl.take("active", 5_001)).toBeGreaterThan(0);
    expect(rl.take("k0", 5_001)).toBe(0);
  });
});
