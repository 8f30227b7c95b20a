// How a streamed completion's body is read (src/llm/step.ts): the service parses the events
// itself, so what the SDK's own reader did must still hold.
import { afterAll, expect, test } from "bun:test";
import { openAiLlm } from "../../src/llm/openai";
import { READS_PER_LOOP, readStep } from "../../src/llm/step";
import type { LlmEvent } from "../../src/llm/types";

let body = "";
const server = Bun.serve({ port: 0, fetch: () => new Response(body, { headers: { "content-type": "text/event-stream" } }) });
afterAll(() => server.stop(true));

const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

async function run(raw: string): Promise<LlmEvent[]> {
  body = raw;
  const llm = openAiLlm({ baseUrl: `http://127.0.0.1:${server.port}/v1`, apiKey: "k", model: "m", maxRetries: 0 });
  const out: LlmEvent[] = [];
  for await (const ev of llm.stream({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal })) out.push(ev);
  return out;
}

test("chunks that arrive together still give one delta each, as the model sent them", async () => {
  const events = await run(chunk({ content: "one " }) + chunk({ content: "two" }) + chunk({}, "stop") + "data: [DONE]\n\n");
  expect(events).toEqual([
    { type: "text", delta: "one " },
    { type: "text", delta: "two" },
  ]);
});

test("the last event counts without the blank line that should end it, and nothing after [DONE] is read", async () => {
  expect(await run(chunk({ content: "hi" }) + chunk({}, "stop").trimEnd())).toEqual([{ type: "text", delta: "hi" }]);
  expect(await run(chunk({ content: "hi" }) + chunk({}, "stop") + "data: [DONE]\n\n" + chunk({ content: "ignored" }))).toEqual([{ type: "text", delta: "hi" }]);
});

test("an error event in the middle of the answer fails the step with the provider's words", async () => {
  const raw = chunk({ content: "so far" }) + `event: error\ndata: ${JSON.stringify({ error: { message: "the model overloaded" } })}\n\n`;
  await expect(run(raw)).rejects.toThrow(/stopped in the middle of its answer: failed: the model overloaded/);
  const inChunk = chunk({ content: "so far" }) + `data: ${JSON.stringify({ error: { message: "quota gone" } })}\n\n`;
  await expect(run(inChunk)).rejects.toThrow(/stopped in the middle of its answer: failed: quota gone/);
});

test("an event that is not JSON fails the step", async () => {
  await expect(run("data: {not json\n\n")).rejects.toThrow(/malformed server-sent event JSON/);
});

test("a flood of stream reads goes on a batch per turn of the event loop, each stream's events whole and in order", async () => {
  // 100 streams whose chunks are all in at once: without a bound, every read would be worked
  // through in the same turn of the loop, timers and new requests waiting behind them
  const n = 3 * READS_PER_LOOP + 4;
  const body = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        const enc = new TextEncoder();
        c.enqueue(enc.encode(chunk({ content: "one " })));
        c.enqueue(enc.encode(chunk({ content: "two" }, "stop")));
        c.close();
      },
    });
  // the reads of the tests before have had their turn
  for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
  let turn = 0;
  const spin = () => void (++turn < 1_000 && setImmediate(spin));
  setImmediate(spin);
  const firstReadTurns: number[] = [];
  const texts = await Promise.all(
    Array.from({ length: n }, async () => {
      const s = readStep(new Response(body(), { headers: { "content-type": "text/event-stream" } }), "m", new AbortController().signal);
      const events: LlmEvent[] = [];
      for (let batch = await s.next(); batch; batch = await s.next()) {
        if (!events.length) firstReadTurns.push(turn);
        events.push(...batch);
      }
      return events.map((e) => (e.type === "text" ? e.delta : e.type)).join("");
    }),
  );
  turn = 1_000;
  expect(texts).toEqual(Array(n).fill("one two"));
  const perTurn = new Map<number, number>();
  for (const t of firstReadTurns) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(READS_PER_LOOP);
  expect(perTurn.size).toBeGreaterThanOrEqual(4);
});
