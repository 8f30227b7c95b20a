// Turn-level failures: HTTP 200 with status "failed" and error {code, message}; stored, and
// the thread goes on afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadItems } from "../../../src/store/conversations";
import { startTestService, type TestService } from "../../support/harness";

const RESP_ID = /^resp_[0-9a-f]{64}$/;

const threadUuid = (id: string) => {
  const h = id.slice(37);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

async function get(t: TestService, id: string, token?: string) {
  const res = await t.api(`/api/v1/responses/${id}`, { token });
  return { status: res.status, body: (await res.json()) as any };
}

function expectFailed(r: { status: number; body: any }, code: string) {
  expect(r.status).toBe(200);
  expect(r.body.object).toBe("response");
  expect(r.body.id).toMatch(RESP_ID);
  expect(r.body.status).toBe("failed");
  expect(r.body.error?.code).toBe(code);
  expect(typeof r.body.error.message).toBe("string");
  expect(r.body.error.message.length).toBeGreaterThan(0);
  expect(Object.keys(r.body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(r.body.error.param).toBeNull();
  expect(r.body.error.type).toBe(code === "not_found" ? "not_found_error" : "server_error");
}

const conversation = (chat: any) => (chat.messages as any[]).filter((m) => m.role !== "system");

describe("model failures", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("an LLM error answers 200 failed with llm_error; it is stored and the thread continues", async () => {
    t.llm.enqueue({ error: { status: 500, message: "upstream exploded" } });
    const failed = await t.respond({ model: "m", input: "first try" });
    expectFailed(failed, "llm_error");
    expect(failed.body.model).toBe("m");

    const got = await get(t, failed.body.id);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe("failed");
    expect(got.body.error).toEqual(failed.body.error);
    expect(got.body.output).toEqual(failed.body.output);

    t.llm.enqueue({ text: "Second time lucky." });
    const next = await t.respond({ model: "m", input: "again", previous_response_id: failed.body.id });
    expect(next.status).toBe(200);
    expect(next.body.status).toBe("completed");
    expect(next.body.error).toBeNull();
    expect(next.body.output[0].content[0].text).toBe("Second time lucky.");
    expect(next.body.id.slice(37)).toBe(failed.body.id.slice(37));
    // the failed turn's message is part of the thread the model sees
    expect(conversation(t.llm.lastChat()).map((m) => m.content)).toEqual(["first try", "again"]);
  });

  test("client-side LLM errors (400, 401, 429) fail the turn the same way", async () => {
    for (const status of [400, 401, 429]) {
      t.llm.enqueue({ error: { status } });
      expectFailed(await t.respond({ model: "m", input: `status ${status}` }), "llm_error");
    }
  });

  test("an LLM error mid-turn, after a tool step, keeps what the turn produced", async () => {
    t.llm.enqueue(
      { text: "Let me check.", toolCalls: [{ name: "not_a_registered_tool", arguments: { x: 1 } }] },
      { error: { status: 503, message: "overloaded" } },
    );
    const failed = await t.respond({ model: "m", input: "check something" });
    expectFailed(failed, "llm_error");
    expect(t.llm.chatRequests().at(-1)!.body.messages.some((m: any) => m.role === "tool")).toBe(true);
    const got = await get(t, failed.body.id);
    expect(got.body.status).toBe("failed");
    expect(got.body.output).toEqual(failed.body.output);
    expect(got.body.output.map((o: any) => o.content?.[0]?.text)).toEqual(["Let me check."]);

    t.llm.enqueue({ text: "Recovered." });
    const next = await t.respond({ model: "m", input: "and now?", previous_response_id: failed.body.id });
    expect(next.body.status).toBe("completed");
    const msgs = conversation(t.llm.lastChat());
    expect(msgs[0]).toEqual({ role: "user", content: "check something" });
    expect(msgs[1].role).toBe("assistant");
    expect(msgs[1].content).toBe("Let me check.");
    expect(msgs[1].tool_calls[0].function.name).toBe("not_a_registered_tool");
    expect(msgs[2].role).toBe("tool");
    expect(msgs.at(-1)).toEqual({ role: "user", content: "and now?" });
  });

  test("a connection dropped mid-stream fails the turn", async () => {
    t.llm.enqueue({ dropAfterChunks: 2, text: "one two three four five" });
    const failed = await t.respond({ model: "m", input: "drop me" });
    expectFailed(failed, "llm_error");
    const got = await get(t, failed.body.id);
    expect(got.body.status).toBe("failed");
    expect(got.body.error.code).toBe("llm_error");
    // a half-received answer is not passed off as a completed message
    expect(failed.body.output.some((o: any) => o.content?.[0]?.text === "one two three four five")).toBe(false);

    t.llm.enqueue({ text: "Back again." });
    const next = await t.respond({ model: "m", input: "still there?", previous_response_id: failed.body.id });
    expect(next.body.status).toBe("completed");
    expect(next.body.output.at(-1).content[0].text).toBe("Back again.");
  });

  describe("cross-user previous_response_id", () => {
    let member: { token: string };
    beforeAll(async () => {
      member = await t.createUser("member");
    });

    test("gives 200 failed not_found, reveals nothing, and leaves the other thread alone", async () => {
      t.llm.enqueue({ text: "The launch code is 0000." });
      const owner = await t.respond({ model: "m", input: "remember the launch code" });
      expect(owner.body.status).toBe("completed");
      const before = await loadItems(t.service.services.db, threadUuid(owner.body.id));
      const n = t.llm.chatRequests().length;

      const attempt = await t.respond({ model: "m", input: "what is the launch code?", previous_response_id: owner.body.id }, member.token);
      expectFailed(attempt, "not_found");
      expect(attempt.body.output).toEqual([]);
      const text = JSON.stringify(attempt.body);
      for (const secret of ["launch code is", "0000", "remember the launch code", owner.body.output[0].id]) expect(text).not.toContain(secret);
      expect(t.llm.chatRequests().length).toBe(n);
      expect(await loadItems(t.service.services.db, threadUuid(owner.body.id))).toEqual(before);

      // the same answer as for a thread that does not exist at all
      const ghost = `resp_${"0".repeat(32)}${crypto.randomUUID().replaceAll("-", "")}`;
      const none = await t.respond({ model: "m", input: "what is the launch code?", previous_response_id: ghost }, member.token);
      expectFailed(none, "not_found");
      expect(none.body.error.message).toBe(attempt.body.error.message);

      // the owner's thread goes on as if nothing happened
      const cont = await t.respond({ model: "m", input: "next", previous_response_id: owner.body.id });
      expect(cont.body.status).toBe("completed");
      expect(conversation(t.llm.lastChat()).map((m) => m.content)).toEqual(["remember the launch code", "The launch code is 0000.", "next"]);
      // and the member cannot read it either
      expect((await get(t, owner.body.id, member.token)).status).toBe(404);
    });
  });
});

describe("no LLM configured", () => {
  for (const [label, env] of [
    ["set to empty strings", { LLM_BASE_URL: "", LLM_MODEL: "", LLM_API_KEY: "" }],
    ["absent", { LLM_BASE_URL: undefined, LLM_MODEL: undefined, LLM_API_KEY: undefined }],
  ] as const) {
    test(`variables ${label}: the turn fails with llm_not_configured naming LLM_BASE_URL`, async () => {
      const t = await startTestService({ env });
      try {
        const r = await t.respond({ model: "m", input: "hello?" });
        expectFailed(r, "llm_not_configured");
        expect(r.body.error.message).toContain("LLM_BASE_URL");
        expect(t.llm.chatRequests()).toHaveLength(0);
        const got = await get(t, r.body.id);
        expect(got.status).toBe(200);
        expect(got.body.status).toBe("failed");
        expect(got.body.error).toEqual(r.body.error);
        // the thread can still be continued (and fails the same way, stored again)
        const again = await t.respond({ model: "m", input: "still?", previous_response_id: r.body.id });
        expectFailed(again, "llm_not_configured");
        expect(again.body.id.slice(37)).toBe(r.body.id.slice(37));
      } finally {
        await t.stop();
      }
    });
  }
});

describe("turn timeout", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ turnTimeoutMs: 300 });
  });
  afterAll(() => t.stop());

  test("a non-streaming turn past its timeout answers 200 failed turn_timeout; stored; the thread continues", async () => {
    t.llm.enqueue({ hang: true });
    const started = Date.now();
    const r = await t.respond({ model: "m", input: "take your time" });
    const elapsed = Date.now() - started;
    expectFailed(r, "turn_timeout");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(5000);

    const got = await get(t, r.body.id);
    expect(got.body.status).toBe("failed");
    expect(got.body.error.code).toBe("turn_timeout");

    t.llm.enqueue({ text: "Quick this time." });
    const next = await t.respond({ model: "m", input: "quick one", previous_response_id: r.body.id });
    expect(next.body.status).toBe("completed");
    expect(next.body.output[0].content[0].text).toBe("Quick this time.");
    expect(conversation(t.llm.lastChat()).map((m) => m.content)).toEqual(["take your time", "quick one"]);
  });

  test("the timeout applies to non-streaming only: a streamed turn outlives it", async () => {
    t.llm.enqueue({ text: "slow but fine", delayMs: 600 });
    const res = await t.api("/api/v1/responses", { method: "POST", json: { model: "m", input: "stream it", stream: true } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    const last = events.at(-1);
    expect(last.type).toBe("response.completed");
    expect(last.response.status).toBe("completed");
    expect(last.response.output[0].content[0].text).toBe("slow but fine");
  });
});
