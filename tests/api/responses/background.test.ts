// background: true, polling, cancel, and GET ?stream=true&starting_after=N for live and
// finished responses; every route also under the legacy /v1 prefix.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { getGate, loadItems, loadResponseItems } from "../../../src/store/conversations";
import { responses } from "../../support/tables";
import { startTestService, type TestService } from "../../support/harness";
import { openStream, sseReader } from "../../support/responses-stream";
import { until } from "../../support/until";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());
beforeEach(() => t.llm.reset());

const MODEL = "m";
const get = async (path: string) => (await (await t.api(path)).json()) as any;
const stream = async (path: string) => {
  const res = await t.api(path);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return sseReader(res.body!);
};

/**
 * A turn of two model steps: the first answers `first` and calls a tool, the second ("second
 * part") waits until the returned function is called.
 */
function twoStepsHeld(first: { text: string; chunks?: number }): () => void {
  const held = Promise.withResolvers<void>();
  let step = 0;
  t.llm.respondWith(async () => {
    if (step++ === 1) await held.promise;
    return step === 1 ? { ...first, toolCalls: [{ name: "nope_builtin", arguments: {} }] } : { text: "second part" };
  });
  return held.resolve;
}

describe("background", () => {
  test("answers at once in_progress; the turn runs on; GET polls it to completed", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    t.llm.respondWith(async () => {
      await gate;
      return { text: "done in the background" };
    });
    const { status, body } = await t.respond({ model: MODEL, input: "long job", background: true });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "in_progress", background: true, output: [], error: null });
    await t.llm.waitForRequests(1);
    expect(await get(`/api/v1/responses/${body.id}`)).toMatchObject({ id: body.id, status: "in_progress", background: true });
    release();
    const done = await until(
      "the response to complete",
      async () => {
        const polled = await get(`/api/v1/responses/${body.id}`);
        if (polled.status !== "completed") expect(polled.status).toBe("in_progress");
        return polled.status === "completed" && polled;
      },
      { everyMs: 5 },
    );
    expect(done.output[0].content[0].text).toBe("done in the background");
    expect(done.background).toBe(true);
    t.llm.respondWith(null);
  });

  test("cancel ends a background response failed/cancelled; GET then shows it so", async () => {
    t.llm.enqueue({ hang: true });
    const { body } = await t.respond({ model: MODEL, input: "hang", background: true });
    await t.llm.waitForRequests(1);
    const cancel = await t.api(`/v1/responses/${body.id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ id: body.id, status: "failed", error: { code: "cancelled" }, model: "reborn" });
    expect(await get(`/api/v1/responses/${body.id}`)).toMatchObject({ status: "failed", error: { code: "cancelled", type: "server_error" } });
  });

  test("while the model streams, the store already holds the response as it would be found after a kill; then its result", async () => {
    t.llm.enqueue({ text: "one two three four five six seven eight", chunkDelayMs: 30 });
    const { body } = await t.respond({ model: MODEL, input: "acknowledged work", background: true });
    await t.llm.waitForTextChunks(2);
    const row = async () => (await t.service.services.db.select().from(responses).where(eq(responses.id, body.id)))[0];
    expect(await row()).toMatchObject({ status: "failed", error: { code: "shutdown" } });
    // and the input with it: what input_items and a chained turn find after a kill
    expect((await loadResponseItems(t.service.services.db, body.id)).input).toEqual([expect.objectContaining({ role: "user", content: "acknowledged work" })]);
    // the live turn is what GET shows meanwhile
    expect(await get(`/api/v1/responses/${body.id}`)).toMatchObject({ status: "in_progress" });
    await until("the response to complete", async () => (await get(`/api/v1/responses/${body.id}`)).status === "completed", { everyMs: 5 });
    expect(await row()).toMatchObject({ status: "completed", error: null });
    expect(JSON.stringify((await get(`/api/v1/responses/${body.id}/input_items`)).data)).toContain("acknowledged work");
  });

  test("a background resume stores its tool output at once and takes the gate along: it is never stored twice", async () => {
    const tools = [{ type: "function", name: "lookup", description: "Look it up.", parameters: { type: "object", properties: {} } }];
    t.llm.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] });
    const paused = await t.respond({ model: MODEL, input: "look it up", tools });
    const call = paused.body.output.find((o: any) => o.type === "function_call");
    const threadId = paused.body.id.slice(37).replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, "$1-$2-$3-$4-$5");
    t.llm.enqueue({ text: "one two three four five six", chunkDelayMs: 30 });
    const resumed = await t.respond({ model: MODEL, background: true, previous_response_id: paused.body.id, tools, input: [{ type: "function_call_output", call_id: call.call_id, output: "42" }] });
    await t.llm.waitForTextChunks(2);
    expect(await getGate(t.service.services.db, threadId)).toBeUndefined();
    // a second answer to the call is refused meanwhile (it waits for the thread, then finds no pending call)
    const again = await t.respond({ model: MODEL, previous_response_id: paused.body.id, tools, input: [{ type: "function_call_output", call_id: call.call_id, output: "42" }] });
    expect(again.status).toBe(400);
    expect(await get(`/api/v1/responses/${resumed.body.id}`)).toMatchObject({ status: "completed" });
    const outputs = (await loadItems(t.service.services.db, threadId)).filter((i) => i.type === "function_call_output");
    expect(outputs).toHaveLength(1);
  });

  test("a background request naming someone else's response fails not_found at once, as a foreground one does", async () => {
    const member = await t.createUser("member");
    const mine = await t.respond({ model: MODEL, input: "mine" });
    const theirs = await t.respond({ model: MODEL, input: "continue", background: true, previous_response_id: mine.body.id }, member.token);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ status: "failed", error: { code: "not_found" } });
    expect(JSON.stringify(theirs.body)).not.toContain("mine");
  });

  test("a background stream: events as they come; a second reader from starting_after gets the rest", async () => {
    const release = twoStepsHeld({ text: "first part" });
    const { body } = await t.respond({ model: MODEL, input: "two steps", background: true });
    await t.llm.waitForRequests(2); // the first step is done, the second waits
    const early = await stream(`/api/v1/responses/${body.id}?stream=true`);
    const seen = await early.until("response.output_item.done");
    expect(seen.data.item.content[0].text).toBe("first part");
    const later = await stream(`/v1/responses/${body.id}?stream=true&starting_after=${seen.data.sequence_number}`);
    release();
    const rest = await later.rest();
    expect(rest[0]!.data.sequence_number).toBe(seen.data.sequence_number + 1);
    expect(rest.at(-1)!.data.type).toBe("response.completed");
    const all = [...early.seen, ...(await early.rest())];
    expect(all.map((e) => e.data.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.slice(seen.data.sequence_number + 1).map((e) => e.data)).toEqual(rest.map((e) => e.data));
    t.llm.respondWith(null);
  });
});

describe("streamed retrieval of a running response", () => {
  test("a reader that joins late gets the events so far exactly as the first reader saw them, text deltas included", async () => {
    const release = twoStepsHeld({ text: "the first part, in pieces", chunks: 4 });
    const first = await openStream(t, { model: MODEL, input: "two steps", background: true });
    const id = (await first.until("response.created")).data.response.id as string;
    await t.llm.waitForRequests(2); // the first step is done, the second waits
    const late = await stream(`/api/v1/responses/${id}?stream=true`);
    const replayed = await late.until("response.output_item.done");
    await first.until("response.output_item.done");
    const upTo = replayed.data.sequence_number as number;
    const live = first.seen.map((e) => e.data).slice(0, upTo + 1);
    expect(late.seen.map((e) => e.data)).toEqual(live);
    expect(live.filter((e) => e.type === "response.output_text.delta").length).toBeGreaterThan(1);
    release();
    await first.rest();
    await late.rest();
    t.llm.respondWith(null);
  });
});

describe("streamed retrieval of a finished response", () => {
  test("replays the standard event sequence, numbered from 0, and honours starting_after", async () => {
    t.llm.enqueue({ text: "Checking.", toolCalls: [{ name: "get_weather", arguments: { city: "Bern" } }] });
    const tools = [{ type: "function", name: "get_weather", description: "w", parameters: { type: "object", properties: {} } }];
    const { body } = await t.respond({ model: MODEL, input: "Bern?", tools });
    const replay = await (await stream(`/api/v1/responses/${body.id}?stream=true`)).rest();
    expect(replay.map((e) => e.data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(replay.map((e) => e.event)).toEqual(replay.map((e) => e.data.type));
    expect(replay.map((e) => e.data.sequence_number)).toEqual(replay.map((_, i) => i));
    expect(replay[0]!.data.response.status).toBe("in_progress");
    expect(replay.at(-1)!.data.response).toEqual(await get(`/api/v1/responses/${body.id}`));
    const tail = await (await stream(`/api/v1/responses/${body.id}?stream=true&starting_after=10`)).rest();
    expect(tail.map((e) => e.data.sequence_number)).toEqual([11, 12]);
    expect((await t.api(`/api/v1/responses/${body.id}?stream=true&starting_after=x`)).status).toBe(400);
  });

  test("a failed response replays to response.failed", async () => {
    t.llm.enqueue({ error: { status: 400, message: "bad prompt" } });
    const { body } = await t.respond({ model: MODEL, input: "x" });
    const replay = await (await stream(`/api/v1/responses/${body.id}?stream=true`)).rest();
    expect(replay.map((e) => e.data.type)).toEqual(["response.created", "response.in_progress", "response.failed"]);
    expect(replay.at(-1)!.data.response.error).toMatchObject({ code: "llm_error", type: "server_error", param: null });
  });

  test("another user's or an unknown response is a 404 envelope, not a stream", async () => {
    const { body } = await t.respond({ model: MODEL, input: "mine" });
    const other = await t.createUser();
    const res = await t.api(`/api/v1/responses/${body.id}?stream=true`, { token: other.token });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.type).toBe("not_found_error");
  });
});

describe("the legacy /v1 prefix answers every route", () => {
  test("retrieve, input_items, cancel, delete, models and conversations", async () => {
    const { body } = await t.respond({ model: MODEL, input: "alias" });
    expect((await get(`/v1/responses/${body.id}`)).id).toBe(body.id);
    expect((await get(`/v1/responses/${body.id}/input_items`)).data).toHaveLength(1);
    const cancel = await t.api(`/v1/responses/${body.id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(400); // it is not running: the same answer as under /api/v1
    expect((await get("/v1/models")).object).toBe("list");
    const conv = (await (await t.api("/v1/conversations", { method: "POST", json: {} })).json()) as any;
    expect((await get(`/api/v1/conversations/${conv.id}`)).id).toBe(conv.id);
    expect((await t.api(`/v1/responses/${body.id}`, { method: "DELETE" })).status).toBe(200);
    // and without a token, as everywhere: plain-text 401, not "No such route"
    for (const path of [`/v1/responses/${body.id}`, `/v1/responses/${body.id}/cancel`]) {
      const res = await t.api(path, { method: path.endsWith("cancel") ? "POST" : "GET", token: null });
      expect({ status: res.status, text: await res.text() }).toEqual({ status: 401, text: "Invalid or missing auth token" });
    }
  });
});

describe("models", () => {
  test("GET /api/v1/models and /v1/models list default and the configured model", async () => {
    for (const path of ["/api/v1/models", "/v1/models"]) {
      const list = await get(path);
      expect(list.object).toBe("list");
      expect(list.data.map((m: any) => m.id)).toEqual(["default", "scripted-model"]);
      for (const m of list.data) expect(m).toEqual({ id: m.id, object: "model", created: expect.any(Number), owned_by: "service" });
    }
  });

  test("GET /models/{model}: a listed name, or any name revision B routes; a malformed one is 404", async () => {
    for (const prefix of ["/api/v1", "/v1"]) {
      expect(await get(`${prefix}/models/scripted-model`)).toEqual({ id: "scripted-model", object: "model", created: expect.any(Number), owned_by: "service" });
      expect((await get(`${prefix}/models/${encodeURIComponent("vendor/some model")}`)).id).toBe("vendor/some model");
      const bad = await t.api(`${prefix}/models/${encodeURIComponent(" padded ")}`);
      expect(bad.status).toBe(404);
      expect(((await bad.json()) as any).error.type).toBe("not_found_error");
    }
  });
});
