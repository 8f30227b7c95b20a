// The service's own limit on LLM streams (llm.maxConcurrent): past it a step waits, counted
// and logged once per episode; a cancelled wait leaves the queue; the client holds a slot for
// exactly as long as its stream runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { openAiLlm } from "../../src/llm/openai";
import { bunFetchLimit, StreamSlots } from "../../src/llm/stream-slots";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

function recordingLog() {
  const records: { level: string; msg: string; [k: string]: unknown }[] = [];
  const log = createLogger({ format: "json", level: "debug", write: (line) => records.push(JSON.parse(line)) });
  return { log, records };
}

const signal = () => new AbortController().signal;

describe("StreamSlots", () => {
  test("past the limit a step waits, in arrival order, and takes the slot that frees", async () => {
    const slots = new StreamSlots(2);
    const a = await slots.acquire(signal());
    const b = await slots.acquire(signal());
    expect(slots.counts()).toEqual({ limit: 2, active: 2, waiting: 0 });
    const order: string[] = [];
    const c = slots.acquire(signal()).then((s) => (order.push("c"), s));
    const d = slots.acquire(signal()).then((s) => (order.push("d"), s));
    await Bun.sleep(0);
    expect(order).toEqual([]);
    expect(slots.counts()).toEqual({ limit: 2, active: 2, waiting: 2 });
    a.release();
    const sc = await c;
    expect(order).toEqual(["c"]);
    expect(slots.counts()).toEqual({ limit: 2, active: 2, waiting: 1 });
    a.release(); // a second release gives nothing back
    await Bun.sleep(0);
    expect(order).toEqual(["c"]);
    b.release();
    (await d).release();
    sc.release();
    expect(slots.counts()).toEqual({ limit: 2, active: 0, waiting: 0 });
  });

  test("a cancelled wait leaves the queue at once with the signal's reason, and takes no slot", async () => {
    const slots = new StreamSlots(1);
    const held = await slots.acquire(signal());
    const cancel = new AbortController();
    const waiting = slots.acquire(cancel.signal);
    expect(slots.counts().waiting).toBe(1);
    cancel.abort(new Error("turn cancelled"));
    await expect(waiting).rejects.toThrow("turn cancelled");
    expect(slots.counts()).toEqual({ limit: 1, active: 1, waiting: 0 });
    held.release();
    expect(slots.counts().active).toBe(0);
    // an aborted signal never gets a slot
    await expect(slots.acquire(cancel.signal)).rejects.toThrow("turn cancelled");
    expect(slots.counts().active).toBe(0);
  });

  test("a wait episode is logged when it starts and when it ends, not once per step", async () => {
    const { log, records } = recordingLog();
    const slots = new StreamSlots(1, log);
    const held = await slots.acquire(signal());
    const waiters = [slots.acquire(signal()), slots.acquire(signal()), slots.acquire(signal())];
    expect(records.map((r) => r.level)).toEqual(["warn"]);
    expect(records[0]).toMatchObject({ msg: expect.stringContaining("LLM streams at their limit"), limit: 1 });
    held.release();
    for (const w of waiters) (await w).release();
    expect(records.map((r) => r.level)).toEqual(["warn", "info"]);
    expect(records[1]).toMatchObject({ msg: expect.stringContaining("below their limit"), waited: 3, most_waiting: 3 });
    // a later episode is logged again
    const again = await slots.acquire(signal());
    const late = slots.acquire(signal());
    again.release();
    (await late).release();
    expect(records.map((r) => r.level)).toEqual(["warn", "info", "warn", "info"]);
  });

  test("Bun's fetch limit is read from BUN_CONFIG_MAX_HTTP_REQUESTS, else Bun's default of 256", () => {
    expect(bunFetchLimit({})).toBe(256);
    expect(bunFetchLimit({ BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" })).toBe(4096);
    expect(bunFetchLimit({ BUN_CONFIG_MAX_HTTP_REQUESTS: "junk" })).toBe(256);
    expect(bunFetchLimit({ BUN_CONFIG_MAX_HTTP_REQUESTS: "99999" })).toBe(65_535);
  });
});

describe("the LLM client under its stream limit", () => {
  let server: ScriptedLLM;
  beforeAll(async () => {
    server = await startScriptedLLM();
  });
  afterAll(() => server.close());

  test("the third stream reaches the model only once one of the first two ends; the slots come back", async () => {
    server.reset();
    const slots = new StreamSlots(2);
    const llm = openAiLlm({ baseUrl: server.url, apiKey: "k", model: "m", maxRetries: 0, slots });
    const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    server.enqueue(...gates.map((g, i) => ({ text: `answer ${i} goes on`, holdUntil: g.promise })));
    const read = async () => {
      let text = "";
      for await (const ev of llm.stream({ messages: [{ role: "user", content: "hi" }], tools: [], signal: signal() })) if (ev.type === "text") text += ev.delta;
      return text;
    };
    const turns = [read(), read(), read()];
    await server.waitForTextChunks(2);
    expect(server.chatRequests().length).toBe(2);
    expect(slots.counts()).toEqual({ limit: 2, active: 2, waiting: 1 });
    gates[0]!.resolve();
    await server.waitForRequests(3);
    expect(slots.counts()).toEqual({ limit: 2, active: 2, waiting: 0 });
    gates[1]!.resolve();
    gates[2]!.resolve();
    expect(await Promise.all(turns)).toEqual(["answer 0 goes on", "answer 1 goes on", "answer 2 goes on"]);
    expect(slots.counts()).toEqual({ limit: 2, active: 0, waiting: 0 });
  });

  test("a failed request and a reader that stops early give their slot back", async () => {
    server.reset();
    const slots = new StreamSlots(1);
    const llm = openAiLlm({ baseUrl: server.url, apiKey: "k", model: "m", maxRetries: 0, slots });
    server.enqueue({ error: { status: 400, message: "bad" } });
    const consume = async () => {
      for await (const _ of llm.stream({ messages: [{ role: "user", content: "hi" }], tools: [], signal: signal() }));
    };
    await expect(consume()).rejects.toThrow("bad");
    expect(slots.counts().active).toBe(0);
    server.enqueue({ text: "one two three four" });
    for await (const _ of llm.stream({ messages: [{ role: "user", content: "hi" }], tools: [], signal: signal() })) break;
    expect(slots.counts().active).toBe(0);
  });
});
