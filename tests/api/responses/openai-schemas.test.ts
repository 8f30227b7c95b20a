// Every object and stream event kind the service emits, validated with Ajv against OpenAI's
// own published schemas (the part of openai/openai-openapi reachable from Response,
// ResponseStreamEvent, conversations and models, August 2026: tests/support/openai-responses-schemas.json).
//
// Two places where that document is stricter than OpenAI's API itself are accepted, and only
// those: `"user": null` (and `"usage": null` in the in-progress shell), and the error codes,
// which are the service's contract (llm_error, cancelled, ...) rather than OpenAI's list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import schemas from "../../support/openai-responses-schemas.json";
import { startTestService, type TestService } from "../../support/harness";
import { lengthCut } from "../../support/provider-wires";
import { sseReader } from "../../support/responses-stream";

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("unixtime", true);
ajv.addSchema(schemas, "openai");
const validators = new Map<string, ValidateFunction>();
const validator = (name: string) => {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = ajv.getSchema(`openai#/components/schemas/${name}`)!));
  if (!v) throw new Error(`no schema ${name}`);
  return v;
};

/** The accepted exceptions, and nothing else, taken out of a copy before validating. */
function acceptedExceptions(value: any): any {
  const copy = structuredClone(value);
  const fix = (r: any) => {
    if (!r || typeof r !== "object") return;
    if (r.object === "response") {
      if (r.user === null) delete r.user;
      if (r.usage === null && (r.status === "in_progress" || r.status === "queued")) delete r.usage;
      if (r.error?.code) r.error.code = "server_error";
    }
  };
  fix(copy);
  fix(copy.response);
  return copy;
}

const kinds = new Map<string, number>();
function expectValid(schema: string, value: unknown, kind: string) {
  const v = validator(schema);
  const ok = v(acceptedExceptions(value));
  if (!ok) console.error(kind, JSON.stringify(value).slice(0, 600), ajv.errorsText(v.errors?.slice(0, 8), { separator: "\n" }));
  expect({ kind, valid: ok }).toEqual({ kind, valid: true });
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const MODEL = "m";
const tools = [{ type: "function", name: "lookup", description: "Looks something up", parameters: { type: "object", properties: { q: { type: "string" } } } }];
const get = async (path: string) => (await (await t.api(path)).json()) as any;

async function streamed(body: unknown) {
  const res = await t.api("/api/v1/responses", { method: "POST", json: body });
  return (await sseReader(res.body!).rest()).map((e) => e.data);
}

describe("objects and events validate against OpenAI's schemas", () => {
  test("responses: completed with text and a function_call, failed, retrieved, cancelled, background", async () => {
    t.llm.enqueue({ text: "Looking.", toolCalls: [{ name: "lookup", arguments: { q: "x" } }], usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const withCall = await t.respond({ model: MODEL, input: "find x", tools, metadata: { a: "b" }, user: "u-1", temperature: 0.5, max_output_tokens: 100 });
    expectValid("Response", withCall.body, "response (completed, message + function_call)");
    expectValid("Response", await get(`/api/v1/responses/${withCall.body.id}`), "response (retrieved)");

    t.llm.enqueue({ text: "{}" });
    const structured = await t.respond({ model: MODEL, input: "json", text: { format: { type: "json_schema", name: "o", schema: { type: "object" }, strict: true } } });
    expectValid("Response", structured.body, "response (json_schema format)");

    t.llm.enqueue({ error: { status: 500, message: "down" } });
    const failed = await t.respond({ model: MODEL, input: "fail" });
    expectValid("Response", failed.body, "response (failed)");

    t.llm.enqueue({ hang: true });
    const bg = await t.respond({ model: MODEL, input: "bg", background: true });
    expectValid("Response", bg.body, "response (background, in progress)");
    await t.llm.waitForRequests(t.llm.chatRequests().length);
    const cancelled = await (await t.api(`/api/v1/responses/${bg.body.id}/cancel`, { method: "POST" })).json();
    expectValid("Response", cancelled, "response (cancelled)");
  });

  test("an answer cut at the token limit: incomplete_details, created, streamed and retrieved", async () => {
    t.llm.enqueue(lengthCut("cut at the limit"));
    const cut = await t.respond({ model: MODEL, input: "long" });
    expect(cut.body.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expectValid("Response", cut.body, "response (incomplete: max_output_tokens)");
    expectValid("Response", await get(`/api/v1/responses/${cut.body.id}`), "response (incomplete, retrieved)");
    t.llm.enqueue(lengthCut("cut while streaming"));
    const events = await streamed({ model: MODEL, input: "long", stream: true });
    expect(events.at(-1).response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    for (const e of events) expectValid("ResponseStreamEvent", e, `event ${e.type} (incomplete)`);
  });

  test("stream events: text, function_call, failed, and a message cut short (incomplete)", async () => {
    t.llm.enqueue({ text: "one two three", toolCalls: [{ name: "lookup", arguments: { q: "y" } }] });
    const events = await streamed({ model: MODEL, input: "go", tools, stream: true });
    t.llm.enqueue({ error: { status: 500, message: "down" } });
    events.push(...(await streamed({ model: MODEL, input: "fail", stream: true })));
    t.llm.enqueue({ dropAfterChunks: 2, text: "cut short here" });
    const cut = await streamed({ model: MODEL, input: "cut", stream: true });
    expect(cut.some((e) => e.type === "response.output_item.done" && e.item.status === "incomplete")).toBe(true);
    events.push(...cut);
    for (const e of events) expectValid("ResponseStreamEvent", e, `event ${e.type}`);
    for (const type of [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.completed",
      "response.failed",
    ]) {
      expect(kinds.has(`event ${type}`)).toBe(true);
    }
  });

  test("a replayed stream (GET ?stream=true) validates too", async () => {
    t.llm.enqueue({ text: "replay me" });
    const { body } = await t.respond({ model: MODEL, input: "r" });
    const res = await t.api(`/api/v1/responses/${body.id}?stream=true`);
    for (const e of await sseReader(res.body!).rest()) expectValid("ResponseStreamEvent", e.data, `replayed ${e.data.type}`);
  });

  test("input_items, conversations, their items and models", async () => {
    const input = [
      { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: "data:image/png;base64,AAAA" }] },
      { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "found" },
      { role: "assistant", content: "Found it." },
      { role: "user", content: "thanks" },
    ];
    const { body } = await t.respond({ model: MODEL, input, tools });
    const items = await get(`/api/v1/responses/${body.id}/input_items`);
    expect(items.data.map((i: any) => i.type)).toEqual(["message", "message", "function_call_output", "function_call", "message"]);
    expectValid("ResponseItemList", items, "input_items list");

    const conv = await (await t.api("/api/v1/conversations", { method: "POST", json: { items: input, metadata: { k: "v" } } })).json();
    expectValid("ConversationResource", conv, "conversation");
    const list = await get(`/api/v1/conversations/${(conv as any).id}/items`);
    expectValid("ConversationItemList", list, "conversation item list");
    for (const item of list.data) expectValid("ConversationItem", await get(`/api/v1/conversations/${(conv as any).id}/items/${item.id}`), `conversation item ${item.type}`);
    const added = await (await t.api(`/api/v1/conversations/${(conv as any).id}/items`, { method: "POST", json: { items: [{ role: "user", content: "more" }] } })).json();
    expectValid("ConversationItemList", added, "added items list");
    const deleted = await (await t.api(`/api/v1/conversations/${(conv as any).id}`, { method: "DELETE" })).json();
    expectValid("DeletedConversationResource", deleted, "conversation deleted");

    const models = await get("/api/v1/models");
    expectValid("ListModelsResponse", models, "models list");
    for (const m of models.data) expectValid("Model", m, "model");
  });
});

test("compact, input_tokens, files, item delete and model retrieve validate too", async () => {
  const file = { type: "input_file", filename: "a.txt", file_data: `data:text/plain;base64,${Buffer.from("hello").toString("base64")}` };
  const input = [{ role: "user", content: [{ type: "input_text", text: "read" }, file] }];
  expectValid("InputFileContent", file, "input_file part");
  t.llm.enqueue({ text: "the summary" });
  const compacted = (await (await t.api("/api/v1/responses/compact", { method: "POST", json: { model: MODEL, input } })).json()) as any;
  // OpenAI's document has no schema for the compacted response itself: its parts have one
  expect(Object.keys(compacted).sort()).toEqual(["created_at", "id", "object", "output", "usage"]);
  expect(compacted.object).toBe("response.compaction");
  expectValid("ResponseUsage", compacted.usage, "compaction usage");
  for (const item of compacted.output) expectValid("ItemResource", item, `compacted window ${item.type}`);
  const sealed = compacted.output.at(-1);
  expectValid("CompactionBody", sealed, "compaction item");
  expectValid("InputItem", sealed, "compaction item given back");
  expectValid("CompactionSummaryItemParam", { type: "compaction", encrypted_content: sealed.encrypted_content }, "compaction item param");

  const counted = (await (await t.api("/api/v1/responses/input_tokens", { method: "POST", json: { model: MODEL, input: "x" } })).json()) as any;
  expect(counted).toEqual({ object: "response.input_tokens", input_tokens: expect.any(Number) });

  const conv = (await (await t.api("/api/v1/conversations", { method: "POST", json: { items: [{ role: "user", content: "a" }, { role: "user", content: "b" }] } })).json()) as any;
  const first = (await get(`/api/v1/conversations/${conv.id}/items`)).data[0];
  const afterDelete = await (await t.api(`/api/v1/conversations/${conv.id}/items/${first.id}`, { method: "DELETE" })).json();
  expectValid("ConversationResource", afterDelete, "conversation after an item delete");
  expectValid("Model", await get("/api/v1/models/scripted-model"), "model retrieved");
});

test("the check has teeth: what the service sent before (no logprobs, no cache_write_tokens, error without type) fails", async () => {
  t.llm.enqueue({ text: "hi" });
  const { body } = await t.respond({ model: MODEL, input: "x" });
  const v = validator("Response");
  expect(v(acceptedExceptions(body))).toBe(true);
  const noLogprobs = structuredClone(body);
  delete noLogprobs.output[0].content[0].logprobs;
  expect(v(acceptedExceptions(noLogprobs))).toBe(false);
  const noCacheWrite = structuredClone(body);
  delete noCacheWrite.usage.input_tokens_details.cache_write_tokens;
  expect(v(acceptedExceptions(noCacheWrite))).toBe(false);
  const event = { type: "response.output_text.delta", item_id: "item_1", output_index: 0, content_index: 0, delta: "x", sequence_number: 3 };
  expect(validator("ResponseStreamEvent")(event)).toBe(false); // logprobs missing
  expect(validator("ResponseStreamEvent")({ ...event, logprobs: [] })).toBe(true);
});
