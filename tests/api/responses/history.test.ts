// What real clients send: stateless history (the whole conversation replayed each request),
// item types and content parts, output of this turn only, input_items, store: false, echoed
// fields, text.format and temperature passed to the LLM, item_reference and delete.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());
beforeEach(() => t.llm.reset());

const MODEL = "m";
const weather = {
  type: "function",
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
/** The messages the LLM got, without the system prompt. */
const sent = () => (t.llm.lastChat().messages as any[]).slice(1);
const texts = (body: any) => body.output.filter((o: any) => o.type === "message").map((o: any) => o.content.map((c: any) => c.text).join(""));

describe("stateless history", () => {
  test("replayed messages go to the LLM in order; output is this turn's answer only, in create, retrieve and stream", async () => {
    const input = [
      { role: "user", content: "one" },
      { role: "assistant", content: "Echo: one" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "COUNT_USER" }] },
    ];
    t.llm.enqueue({ text: "user messages: 2" });
    const created = await t.respond({ model: MODEL, input });
    expect(created.status).toBe(200);
    expect(texts(created.body)).toEqual(["user messages: 2"]);
    expect(sent()).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "Echo: one" },
      { role: "user", content: "COUNT_USER" },
    ]);
    const got = (await (await t.api(`/api/v1/responses/${created.body.id}`)).json()) as any;
    expect(got.output).toEqual(created.body.output);

    t.llm.enqueue({ text: "user messages: 2", chunks: 3 });
    const res = await t.api("/api/v1/responses", { method: "POST", json: { model: MODEL, input, stream: true } });
    const events = (await res.text())
      .split("\n\n")
      .filter((f) => f.includes("data: "))
      .map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)));
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    const completed = events.at(-1);
    expect(completed.type).toBe("response.completed");
    expect(texts(completed.response)).toEqual([deltas]);
  });

  test("a client-side tool loop over several steps without previous_response_id", async () => {
    const input: any[] = [{ role: "user", content: "Weather in Paris and Rome?" }];
    t.llm.enqueue({ text: "Let me look.", toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] });
    const first = await t.respond({ model: MODEL, input, tools: [weather] });
    expect(first.body.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
    input.push(...first.body.output, { type: "function_call_output", call_id: first.body.output[1].call_id, output: "sunny" });

    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] });
    const second = await t.respond({ model: MODEL, input, tools: [weather] });
    expect(second.status).toBe(200);
    expect(second.body.output.map((o: any) => o.type)).toEqual(["function_call"]);
    const call1 = first.body.output[1].call_id;
    expect(sent()).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: call1, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: call1, content: "sunny" },
    ]);
    // an output given as input_text parts is the same to the model
    input.push(...second.body.output, { type: "function_call_output", call_id: second.body.output[0].call_id, output: [{ type: "input_text", text: "rainy" }] });
    t.llm.enqueue({ text: "Paris is sunny, Rome is rainy." });
    const third = await t.respond({ model: MODEL, input, tools: [weather] });
    expect(third.body.status).toBe("completed");
    expect(texts(third.body)).toEqual(["Paris is sunny, Rome is rainy."]);
    expect(sent().at(-1)).toEqual({ role: "tool", tool_call_id: second.body.output[0].call_id, content: "rainy" });
    // each request was its own thread: nothing waits on any of them
    for (const r of [first, second, third]) expect(r.body.previous_response_id).toBeNull();
  });

  test("the same loop chained with previous_response_id still resumes the gate", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const first = await t.respond({ model: MODEL, input: "Oslo?", tools: [weather] });
    const call = first.body.output[0];
    t.llm.enqueue({ text: "Cold." });
    const second = await t.respond({
      model: MODEL,
      previous_response_id: first.body.id,
      tools: [weather],
      input: [{ type: "function_call_output", call_id: call.call_id, output: [{ type: "input_text", text: "-3C" }] }],
    });
    expect(texts(second.body)).toEqual(["Cold."]);
    expect(sent().at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: "-3C" });
  });

  test("images as input_image parts (URL and data URL) reach the LLM as image parts; reasoning items are dropped", async () => {
    const dataUrl = "data:image/png;base64,iVBORw0KGgo=";
    const { status, body } = await t.respond({
      model: MODEL,
      input: [
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is in these?" },
            { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" },
            { type: "input_image", image_url: dataUrl },
          ],
        },
      ],
    });
    expect({ status, error: body.error }).toEqual({ status: 200, error: null });
    expect(sent()).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
          { type: "image_url", image_url: { url: dataUrl } },
        ],
      },
    ]);
    const items = (await (await t.api(`/api/v1/responses/${body.id}/input_items?order=asc`)).json()) as any;
    expect(items.data[0].content).toEqual([
      { type: "input_text", text: "What is in these?" },
      { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" },
      { type: "input_image", image_url: dataUrl, detail: "auto" },
    ]);
  });

  test("a tool's output with an image part follows its tool message as a user message", async () => {
    const input = [
      { role: "user", content: "Take a screenshot" },
      { type: "function_call", call_id: "call_shot", name: "screenshot", arguments: "{}" },
      { type: "function_call_output", call_id: "call_shot", output: [{ type: "input_text", text: "done" }, { type: "input_image", image_url: "data:image/png;base64,AAAA" }] },
    ];
    const { body } = await t.respond({ model: MODEL, input, tools: [{ ...weather, name: "screenshot" }] });
    expect(body.status).toBe("completed");
    expect(sent().slice(2)).toEqual([
      { role: "tool", tool_call_id: "call_shot", content: "done" },
      { role: "user", content: [{ type: "text", text: "Images returned by call call_shot:" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
    ]);
  });

  test("system and developer messages, refusal and output_text parts", async () => {
    await t.respond({
      model: MODEL,
      input: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [] }, { type: "refusal", refusal: "no more" }] },
        { role: "system", content: [{ type: "input_text", text: "Use French." }] },
        { role: "user", content: "again" },
      ],
    });
    expect(sent()).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello\nno more" },
      { role: "user", content: "<instructions>\nBe brief.\n</instructions>\n\n<instructions>\nUse French.\n</instructions>\n\nagain" },
    ]);
  });
});

describe("input_items, item_reference and delete", () => {
  test("input_items lists the turn's input in OpenAI's list shape, with order, limit and after", async () => {
    const { body } = await t.respond({
      model: MODEL,
      input: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
        { role: "user", content: "c" },
      ],
    });
    const list = async (q = "") => (await (await t.api(`/api/v1/responses/${body.id}/input_items${q}`)).json()) as any;
    const all = await list();
    expect(all.object).toBe("list");
    expect(all.has_more).toBe(false);
    // newest first by default, as OpenAI lists them
    expect(all.data.map((i: any) => i.content[0].text)).toEqual(["c", "b", "a"]);
    expect(all.data[1]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(all.first_id).toBe(all.data[0].id);
    expect(all.last_id).toBe(all.data[2].id);
    const asc = await list("?order=asc&limit=2");
    expect(asc.data.map((i: any) => i.content[0].text)).toEqual(["a", "b"]);
    expect(asc.has_more).toBe(true);
    const next = await list(`?order=asc&limit=2&after=${asc.last_id}`);
    expect(next.data.map((i: any) => i.content[0].text)).toEqual(["c"]);
    expect(next.has_more).toBe(false);
    for (const bad of ["?limit=0", "?limit=101", "?order=up", "?after=item_nope"]) {
      const res = await t.api(`/api/v1/responses/${body.id}/input_items${bad}`);
      expect(res.status).toBe(400);
    }
    // the answer is output, never input
    expect(JSON.stringify(all)).not.toContain("You said");
  });

  test("item_reference resolves an item of the caller's stored responses, and no one else's", async () => {
    t.llm.enqueue({ text: "The code is 4711." });
    const first = await t.respond({ model: MODEL, input: "Make up a code" });
    const ref = first.body.output[0].id;
    const second = await t.respond({ model: MODEL, input: [{ role: "user", content: "Make up a code" }, { type: "item_reference", id: ref }, { role: "user", content: "Repeat it" }] });
    expect(second.body.status).toBe("completed");
    expect(sent()).toEqual([
      { role: "user", content: "Make up a code" },
      { role: "assistant", content: "The code is 4711." },
      { role: "user", content: "Repeat it" },
    ]);
    const other = await t.createUser();
    const theirs = await t.respond({ model: MODEL, input: [{ type: "item_reference", id: ref }, { role: "user", content: "hi" }] }, other.token);
    expect(theirs.status).toBe(400);
    expect(theirs.body.error.message).toContain(ref);
  });

  test("DELETE removes a response: then 404, not chainable, not referable; the thread's other turns stay", async () => {
    const first = await t.respond({ model: MODEL, input: "keep me" });
    const second = await t.respond({ model: MODEL, input: "delete me", previous_response_id: first.body.id });
    const del = await t.api(`/api/v1/responses/${second.body.id}`, { method: "DELETE" });
    expect(await del.json()).toEqual({ id: second.body.id, object: "response.deleted", deleted: true });
    expect((await t.api(`/api/v1/responses/${second.body.id}`)).status).toBe(404);
    expect((await t.api(`/api/v1/responses/${second.body.id}/input_items`)).status).toBe(404);
    expect((await t.api(`/api/v1/responses/${second.body.id}`, { method: "DELETE" })).status).toBe(404);
    const chained = await t.respond({ model: MODEL, input: "next", previous_response_id: second.body.id });
    expect(chained.body).toMatchObject({ status: "failed", error: { code: "not_found" } });
    const ref = await t.respond({ model: MODEL, input: [{ type: "item_reference", id: second.body.output[0].id }, { role: "user", content: "x" }] });
    expect(ref.status).toBe(400);
    expect((await t.api(`/api/v1/responses/${first.body.id}`)).status).toBe(200);
    const other = await t.createUser();
    expect((await t.api(`/api/v1/responses/${first.body.id}`, { method: "DELETE", token: other.token })).status).toBe(404);
  });
});

describe("store, echoed fields and the LLM options", () => {
  test("store: false runs the turn but keeps nothing: not retrievable, not chainable", async () => {
    t.llm.enqueue({ text: "ephemeral" });
    const { body } = await t.respond({ model: MODEL, input: "secret", store: false });
    expect(body).toMatchObject({ status: "completed", store: false });
    expect(texts(body)).toEqual(["ephemeral"]);
    expect((await t.api(`/api/v1/responses/${body.id}`)).status).toBe(404);
    expect((await t.api(`/api/v1/responses/${body.id}/input_items`)).status).toBe(404);
    const chained = await t.respond({ model: MODEL, input: "more", previous_response_id: body.id });
    expect(chained.body).toMatchObject({ status: "failed", error: { code: "not_found" } });
    const threads = (await (await t.api("/api/chat/threads")).json()) as any;
    expect(threads.threads.some((th: any) => th.title === "secret")).toBe(false);
  });

  test("store, metadata, max_output_tokens, tool_choice, parallel_tool_calls, text, user and temperature are echoed, in create and retrieve", async () => {
    const format = { type: "json_schema", name: "answer", schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false }, strict: true };
    const echo = {
      store: true,
      metadata: { ticket: "T-1", team: "blue" },
      max_output_tokens: 300,
      tool_choice: "required",
      parallel_tool_calls: true,
      text: { format },
      user: "user-42",
      temperature: 0.3,
    };
    t.llm.enqueue({ text: '{"a":"x"}' });
    const { body } = await t.respond({ model: MODEL, input: "json please", ...echo });
    expect(body).toMatchObject(echo);
    const got = (await (await t.api(`/api/v1/responses/${body.id}`)).json()) as any;
    expect(got).toMatchObject(echo);
    // text.format became response_format, temperature went along
    const chat = t.llm.lastChat();
    expect(chat.response_format).toEqual({ type: "json_schema", json_schema: { name: "answer", schema: format.schema, strict: true } });
    expect(chat.temperature).toBe(0.3);
  });

  test("json_object format and defaults", async () => {
    const { body } = await t.respond({ model: MODEL, input: "x", text: { format: { type: "json_object" } } });
    expect(t.llm.lastChat().response_format).toEqual({ type: "json_object" });
    expect(t.llm.lastChat().temperature).toBeUndefined();
    const plain = await t.respond({ model: MODEL, input: "y" });
    expect(plain.body).toMatchObject({ store: true, metadata: {}, max_output_tokens: null, tool_choice: "auto", parallel_tool_calls: false, text: { format: { type: "text" } }, user: null, temperature: null });
    expect(t.llm.lastChat().response_format).toBeUndefined();
    expect(body.text).toEqual({ format: { type: "json_object" } });
  });
});
