// GET /api/v1/responses/{id}: the response rebuilt from the stored conversation, per revision;
// 404 envelopes; and the legacy POST alias /v1/responses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";

const RESP_ID = /^resp_[0-9a-f]{64}$/;

async function get(t: TestService, id: string, token?: string) {
  const res = await t.api(`/api/v1/responses/${encodeURIComponent(id)}`, { token });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, contentType: res.headers.get("content-type") ?? "" };
}

async function postTo(t: TestService, path: string, json: unknown, token?: string) {
  const res = await t.api(path, { method: "POST", json, token });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

function expectNotFound(r: { status: number; body: any; contentType: string }) {
  expect(r.status).toBe(404);
  expect(r.contentType).toContain("application/json");
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.type).toBe("not_found_error");
  expect(typeof r.body.error.message).toBe("string");
  expect(r.body.error.code === null || typeof r.body.error.code === "string").toBe(true);
}

const lookupTool = {
  type: "function",
  name: "lookup",
  description: "Looks something up",
  parameters: { type: "object", properties: { q: { type: "string", description: "query" } }, required: ["q"] },
};

/** A well-formed id that names nothing. */
const unknownId = () => `resp_${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`;

describe("revision B", () => {
  let t: TestService;
  let member: { token: string };
  beforeAll(async () => {
    t = await startTestService();
    member = await t.createUser("member");
  });
  afterAll(() => t.stop());

  test("the rebuilt object equals the create output; model is reborn; usage from the stored run", async () => {
    t.llm.enqueue({ text: "The answer is 42.", usage: { prompt_tokens: 30, completion_tokens: 6 } });
    const created = await t.respond({ model: "gpt-4o", input: "What is the answer?" });
    expect(created.status).toBe(200);
    expect(created.body.model).toBe("gpt-4o");

    const got = await get(t, created.body.id);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(created.body.id);
    expect(got.body.object).toBe("response");
    expect(got.body.created_at).toBe(created.body.created_at);
    expect(got.body.status).toBe("completed");
    expect(got.body.error).toBeNull();
    expect(got.body.output).toEqual(created.body.output);
    expect(got.body.output[0].content[0]).toEqual({ type: "output_text", text: "The answer is 42.", annotations: [], logprobs: [] });
    expect(got.body.model).toBe("reborn");
    expect(got.body.usage.input_tokens).toBe(30);
    expect(got.body.usage.output_tokens).toBe(6);
    expect(got.body.usage.total_tokens).toBe(36);
    expect(typeof got.body.usage.cost_usd).toBe("number");
    expect(got.body.usage.cost_usd).toBeGreaterThanOrEqual(0);
  });

  test("usage adds up over the model steps of a turn", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "no_such_builtin", arguments: {} }], text: "Checking." },
      { text: "Done.", usage: { prompt_tokens: 50, completion_tokens: 2 } },
    );
    // the first step's usage is computed by the scripted LLM from the request; read it back from create
    const created = await t.respond({ model: "m", input: "do it" });
    expect(created.body.status).toBe("completed");
    expect(created.body.usage.input_tokens).toBeGreaterThan(50);
    const got = await get(t, created.body.id);
    expect(got.body.usage.input_tokens).toBe(created.body.usage.input_tokens);
    expect(got.body.usage.output_tokens).toBe(created.body.usage.output_tokens);
    expect(got.body.usage.total_tokens).toBe(created.body.usage.total_tokens);
    // built-in tool activity stays inside: the caller sees the two messages only
    expect(got.body.output).toEqual(created.body.output);
    expect(got.body.output.map((o: any) => o.content[0].text)).toEqual(["Checking.", "Done."]);
  });

  test("a function_call response is rebuilt with the same call, and each turn of a thread keeps its own items", async () => {
    t.llm.enqueue({ text: "Let me look.", toolCalls: [{ name: "lookup", arguments: { q: "tides" } }] });
    const first = await t.respond({ model: "m", input: "tides?", tools: [lookupTool] });
    expect(first.body.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
    const call = first.body.output[1];

    t.llm.enqueue({ text: "High tide at noon." });
    const second = await t.respond({
      model: "m",
      previous_response_id: first.body.id,
      tools: [lookupTool],
      input: [{ type: "function_call_output", call_id: call.call_id, output: "noon" }],
    });
    expect(second.body.status).toBe("completed");

    const got1 = await get(t, first.body.id);
    const got2 = await get(t, second.body.id);
    expect(got1.body.output).toEqual(first.body.output);
    expect(got1.body.output[1]).toEqual({
      type: "function_call",
      id: call.id,
      call_id: call.call_id,
      name: "lookup",
      arguments: JSON.stringify({ q: "tides" }),
      status: "completed",
    });
    expect(got2.body.output).toEqual(second.body.output);
    expect(got2.body.output).toHaveLength(1);
    expect(got2.body.output[0].content[0].text).toBe("High tide at noon.");
  });

  test("404 envelope for an unknown id, a malformed id, and another user's response", async () => {
    expectNotFound(await get(t, unknownId()));
    for (const bad of ["resp_123", "nonsense", `resp_${"G".repeat(64)}`, `resp_${"a".repeat(65)}`]) expectNotFound(await get(t, bad));

    const mine = await t.respond({ model: "m", input: "owner's secret: swordfish" });
    const theirs = await get(t, mine.body.id, member.token);
    expectNotFound(theirs);
    expect(JSON.stringify(theirs.body)).not.toContain("swordfish");
    // ... and the other way round
    const memberResp = await t.respond({ model: "m", input: "member's note" }, member.token);
    expect(memberResp.body.status).toBe("completed");
    expect((await get(t, memberResp.body.id, member.token)).status).toBe(200);
    expectNotFound(await get(t, memberResp.body.id));
    // the owner still reads its own
    expect((await get(t, mine.body.id)).body.output).toEqual(mine.body.output);
  });

  test("GET needs a token", async () => {
    const mine = await t.respond({ model: "m", input: "hello" });
    const res = await t.api(`/api/v1/responses/${mine.body.id}`, { token: null });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe("Invalid or missing auth token");
  });

  describe("legacy alias POST /v1/responses", () => {
    test("creates the same response object", async () => {
      t.llm.enqueue({ text: "Via the alias.", usage: { prompt_tokens: 5, completion_tokens: 3 } });
      const r = await postTo(t, "/v1/responses", { model: "alias-model", input: "hi alias" });
      expect(r.status).toBe(200);
      expect(r.body.id).toMatch(RESP_ID);
      expect(r.body).toMatchObject({ object: "response", status: "completed", model: "alias-model", error: null });
      expect(r.body.output).toHaveLength(1);
      expect(r.body.output[0].content).toEqual([{ type: "output_text", text: "Via the alias.", annotations: [], logprobs: [] }]);
      expect(r.body.usage).toMatchObject({ input_tokens: 5, output_tokens: 3, total_tokens: 8 });
      const got = await get(t, r.body.id);
      expect(got.body.output).toEqual(r.body.output);
    });

    test("threads continue across both paths", async () => {
      t.llm.enqueue({ text: "A1" }, { text: "A2" }, { text: "A3" });
      const a = await postTo(t, "/v1/responses", { model: "m", input: "q1" });
      const b = await postTo(t, "/api/v1/responses", { model: "m", input: "q2", previous_response_id: a.body.id });
      const c = await postTo(t, "/v1/responses", { model: "m", input: "q3", previous_response_id: b.body.id });
      expect([a, b, c].map((r) => r.body.status)).toEqual(["completed", "completed", "completed"]);
      expect(c.body.id.slice(37)).toBe(a.body.id.slice(37));
      const msgs = (t.llm.lastChat().messages as any[]).filter((m) => m.role !== "system").map((m) => m.content);
      expect(msgs).toEqual(["q1", "A1", "q2", "A2", "q3"]);
    });

    test("rejects the same bad requests with the same envelope, changing nothing", async () => {
      const n = t.llm.chatRequests().length;
      for (const body of [{ input: "no model" }, { model: "m" }, { model: "m", input: "hi", temperature: 9 }, { model: " m", input: "x" }]) {
        const viaAlias = await postTo(t, "/v1/responses", body);
        const viaApi = await postTo(t, "/api/v1/responses", body);
        expect(viaAlias.status).toBe(400);
        expect(viaAlias.body).toEqual(viaApi.body);
        expect(viaAlias.body.error.type).toBe("invalid_request_error");
      }
      expect(t.llm.chatRequests().length).toBe(n);
    });

    test("needs the same auth", async () => {
      const res = await t.api("/v1/responses", { method: "POST", json: { model: "m", input: "hi" }, token: null });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("Invalid or missing auth token");
    });

    test("other users' threads are off limits there too", async () => {
      const mine = await t.respond({ model: "m", input: "private" });
      const n = t.llm.chatRequests().length;
      const r = await postTo(t, "/v1/responses", { model: "m", input: "peek", previous_response_id: mine.body.id }, member.token);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("failed");
      expect(r.body.error.code).toBe("not_found");
      expect(t.llm.chatRequests().length).toBe(n);
    });
  });
});

describe("revision A", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_API_REVISION: "A" } });
  });
  afterAll(() => t.stop());

  test('the rebuilt object equals the create output; usage is zero and model "default"', async () => {
    t.llm.enqueue({ text: "Revision A answer.", usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const created = await t.respond({ input: "hi" });
    expect(created.status).toBe(200);
    expect(created.body.usage.input_tokens).toBe(12);

    const got = await get(t, created.body.id);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(created.body.id);
    expect(got.body.created_at).toBe(created.body.created_at);
    expect(got.body.status).toBe("completed");
    expect(got.body.output).toEqual(created.body.output);
    expect(got.body.output[0].content[0].text).toBe("Revision A answer.");
    expect(got.body.model).toBe("default");
    expect(got.body.usage.input_tokens).toBe(0);
    expect(got.body.usage.output_tokens).toBe(0);
    expect(got.body.usage.total_tokens).toBe(0);
  });

  test("404 envelope for unknown and malformed ids", async () => {
    expectNotFound(await get(t, unknownId()));
    expectNotFound(await get(t, "resp_bad"));
  });

  test("404 for another user's response", async () => {
    const member = await t.createUser("member");
    const mine = await t.respond({ input: "owner only" });
    expectNotFound(await get(t, mine.body.id, member.token));
  });

  test("the legacy alias applies revision A rules", async () => {
    const ok = await postTo(t, "/v1/responses", { input: "hi" });
    expect(ok.status).toBe(200);
    expect(ok.body.model).toBe("default");
    const bad = await postTo(t, "/v1/responses", { model: "gpt-4o", input: "hi" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.type).toBe("invalid_request_error");
  });

  test("GET /models/{model} knows only default", async () => {
    expect((await t.api("/api/v1/models/default")).status).toBe(200);
    expect((await t.api("/api/v1/models/gpt-4o")).status).toBe(404);
  });
});
