// A stateless replay sent with previous_response_id (LlamaIndex's trackPreviousResponses): the
// whole history, the pending function_call and its output. It resumes the thread; with
// store: false it is served from the input alone, and never fails silently.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());
beforeEach(() => t.llm.reset());

const MODEL = "m";
const tools = [{ type: "function", name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
const question = { role: "user", content: "Weather in Paris?" };
const toolMessages = () => (t.llm.lastChat().messages as any[]).filter((m) => m.role === "tool").map((m) => m.content);

async function firstCall(store: boolean) {
  t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] });
  const first = await t.respond({ model: MODEL, input: [{ role: "system", content: "Be brief." }, question], tools, store });
  const call = first.body.output.find((o: any) => o.type === "function_call");
  expect(call).toBeDefined();
  return { first: first.body, call };
}
const replay = (call: any) => [
  { role: "system", content: "Be brief." },
  question,
  { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
  { type: "function_call_output", call_id: call.call_id, output: "sunny" },
];

describe("replayed resume", () => {
  test("store: true: the replay resumes the waiting thread; the history is not stored twice", async () => {
    const { first, call } = await firstCall(true);
    t.llm.enqueue({ text: "It is sunny in Paris." });
    const second = await t.respond({ model: MODEL, input: replay(call), previous_response_id: first.id, tools });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: "completed", output: [{ type: "message", content: [{ text: "It is sunny in Paris." }] }] });
    expect(toolMessages()).toEqual(["sunny"]);
    // the model saw the question once, not replayed again after the call
    const users = (t.llm.lastChat().messages as any[]).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
    const items = (await (await t.api(`/api/v1/conversations/conv_${first.id.slice(-32)}/items?order=asc`)).json()) as any;
    expect(items.data.map((i: any) => i.type)).toEqual(["message", "function_call", "function_call_output", "message"]);
  });

  test("the replay of a call the thread does not wait on is still refused", async () => {
    const { first, call } = await firstCall(true);
    const wrong = replay({ ...call, call_id: "call_other" });
    const r = await t.respond({ model: MODEL, input: wrong, previous_response_id: first.id, tools });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain(`waiting for the output of call ${call.call_id}`);
  });

  test("store: false: the replay is served from its input alone, under /api/v1 and /v1", async () => {
    for (const path of ["/api/v1/responses", "/v1/responses"]) {
      const { first, call } = await firstCall(false);
      t.llm.enqueue({ text: "Sunny." });
      const res = await t.api(path, { method: "POST", json: { model: MODEL, input: replay(call), previous_response_id: first.id, tools, store: false } });
      const second = (await res.json()) as any;
      expect(second).toMatchObject({ status: "completed", store: false, previous_response_id: first.id });
      expect(second.output[0].content[0].text).toBe("Sunny.");
      expect(toolMessages()).toEqual(["sunny"]);
      expect(JSON.stringify(t.llm.lastChat().messages)).toContain("Weather in Paris?");
    }
  });

  test("store: false: a resume that does not replay the call is a 400 that says why; another user's is not found", async () => {
    const { first, call } = await firstCall(false);
    const onlyOutput = await t.respond({ model: MODEL, input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }], previous_response_id: first.id, tools });
    expect(onlyOutput.status).toBe(400);
    expect(onlyOutput.body.error.message).toContain("was made with store: false");
    const other = await t.createUser();
    const foreign = await t.respond({ model: MODEL, input: replay(call), previous_response_id: first.id, tools }, other.token);
    expect(foreign.body).toMatchObject({ status: "failed", error: { code: "not_found" } });
  });
});
