// How a streamed completion's body is read (src/llm/step.ts): the service parses the events
// itself, so what the SDK's own reader did must still hold.
import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openAiLlm } from "../../src/llm/openai";
import { describeFailure } from "../../src/llm/retry";
import { http1Fetch } from "../../src/llm/http1-fetch";
import { READS_PER_LOOP, readStep, step } from "../../src/llm/step";
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

describe("the request: the SDK's, built once per client", () => {
  type Seen = { headers: Record<string, string>; body: string };
  let seen: Seen[] = [];
  let answer: () => Response | Promise<Response> = () => new Response(chunk({ content: "ok" }, "stop"), { headers: { "content-type": "text/event-stream" } });
  const upstream = Bun.serve({
    port: 0,
    async fetch(req) {
      seen.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return answer();
    },
  });
  afterAll(() => upstream.stop(true));
  const client = (timeout = 600_000) => new OpenAI({ baseURL: `http://127.0.0.1:${upstream.port}/v1`, apiKey: "sk-step", maxRetries: 0, timeout });
  const request = (content: string, signal = new AbortController().signal) => ({ messages: [{ role: "user" as const, content }], tools: [], signal });
  /** What the SDK's own `post` makes of the same request: its error, or undefined. */
  const sdkPost = (c: OpenAI, signal?: AbortSignal) =>
    c.post("/chat/completions", { body: "{}", headers: { "content-type": "application/json" }, stream: true, signal }).asResponse().then(() => undefined, (e: Error) => e);
  const stepError = (c: OpenAI, signal?: AbortSignal) =>
    step(c, "m", request("hi", signal)).then((s) => (s.cancel(), undefined), (e: Error) => e);

  test("each step sends the headers the SDK's post sends, and its own body", async () => {
    seen = [];
    const c = client();
    await sdkPost(c);
    for (const content of ["hi", "a longer question than the first"]) {
      const s = await step(c, "m", request(content));
      while (await s.next());
    }
    const [sdk, first, second] = seen as [Seen, Seen, Seen];
    const { "content-length": _, ...sdkHeaders } = sdk.headers;
    for (const r of [first, second]) {
      const { "content-length": length, ...headers } = r.headers;
      expect(headers).toEqual(sdkHeaders);
      expect(Number(length)).toBe(new TextEncoder().encode(r.body).length);
    }
    expect(sdkHeaders.authorization).toBe("Bearer sk-step");
    expect(sdkHeaders["user-agent"]).toStartWith("OpenAI/JS");
    expect(JSON.parse(first.body).messages[0].content).toBe("hi");
    expect(JSON.parse(second.body).messages[0].content).toBe("a longer question than the first");
  });

  test("a refused request fails as the SDK's post fails: the class for its status, the provider's words", async () => {
    const c = client();
    for (const refusal of [
      () => Response.json({ error: { message: "slow down", type: "rate_limit", code: "rate_limited" } }, { status: 429, headers: { "retry-after": "2" } }),
      () => new Response("<html>bad gateway</html>", { status: 502, headers: { "content-type": "text/html" } }),
      () => Response.json({ error: { message: "no such model" } }, { status: 404 }),
    ]) {
      answer = refusal;
      const [sdk, ours] = [await sdkPost(c), await stepError(c)];
      expect(ours).toBeInstanceOf(OpenAI.APIError);
      expect(ours!.constructor).toBe(sdk!.constructor);
      expect(ours!.message).toBe(sdk!.message);
      expect((ours as InstanceType<typeof OpenAI.APIError>).status).toBe((sdk as InstanceType<typeof OpenAI.APIError>).status);
      expect((ours as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after") ?? null).toBe((sdk as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after") ?? null);
    }
  });

  test("the caller's signal stops the body's reads too, and a step leaves no listener on it however it ends", async () => {
    const { getEventListeners } = await import("node:events");
    const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;
    for (const transport of [fetch, http1Fetch]) {
      // read to its end
      answer = () => new Response(chunk({ content: "ok" }, "stop"), { headers: { "content-type": "text/event-stream" } });
      const done = new AbortController();
      const s = await step(client(), "m", request("hi", done.signal), transport);
      expect(listeners(done.signal)).toBe(1);
      while (await s.next());
      expect(listeners(done.signal)).toBe(0);

      // refused
      answer = () => new Response("no", { status: 400 });
      const refused = new AbortController();
      expect(await step(client(), "m", request("hi", refused.signal), transport).catch((e: Error) => e)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(listeners(refused.signal)).toBe(0);

      // cancelled while the answer streams: the read ends with the caller's reason
      let sent = 0;
      answer = () =>
        new Response(
          new ReadableStream({
            async pull(c) {
              if (sent++ === 0) c.enqueue(new TextEncoder().encode(chunk({ content: "first" })));
              else await Bun.sleep(5_000);
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        );
      const cancel = new AbortController();
      const streaming = await step(client(), "m", request("hi", cancel.signal), transport);
      expect(await streaming.next()).toEqual([{ type: "text", delta: "first" }]);
      const reason = new Error("cancelled by the caller");
      const t0 = performance.now();
      setTimeout(() => cancel.abort(reason), 20);
      expect(await streaming.next().catch((e: Error) => e)).toBe(reason);
      expect(performance.now() - t0).toBeLessThan(1_000);
      expect(listeners(cancel.signal)).toBe(0);
    }
  });

  test("no answer fails as the SDK's post fails: timed out, not connected, or cancelled", async () => {
    answer = () => Bun.sleep(2_000).then(() => new Response("late"));
    const slow = client(100);
    const [sdkTimeout, ourTimeout] = [await sdkPost(slow), await stepError(slow)];
    expect(ourTimeout).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(ourTimeout!.constructor).toBe(sdkTimeout!.constructor);

    const cancel = () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      return ac.signal;
    };
    const c = client();
    const [sdkCancel, ourCancel] = [await sdkPost(c, cancel()), await stepError(c, cancel())];
    expect(ourCancel).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(ourCancel!.constructor).toBe(sdkCancel!.constructor);

    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const gone = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", maxRetries: 0 });
    const [sdkGone, ourGone] = [await sdkPost(gone), await stepError(gone)];
    expect(ourGone).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(ourGone!.constructor).toBe(sdkGone!.constructor);
    expect(ourGone!.message).toBe(sdkGone!.message);
    expect(describeFailure(ourGone)).toBe(describeFailure(sdkGone));
  });
});
