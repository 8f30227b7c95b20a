// The one SSE writer: an event sent to many streams is serialised once; a reader that does
// not read is let go once it is MAX_BACKLOG_FRAMES behind, and sending never waits for it.
import { expect, spyOn, test } from "bun:test";
import { MAX_BACKLOG_FRAMES, sseResponse } from "../../src/http/sse";

test("one event to 500 streams is serialised once, and every stream gets the same bytes", async () => {
  const senders: ((e: { type: string; delta?: string }) => void)[] = [];
  const streams = Array.from({ length: 500 }, () => sseResponse((send) => (senders.push(send), () => {}), "hello"));
  const readers = streams.map((r) => r.body!.getReader());
  for (const r of readers) await r.read(); // the hello comment
  const event = { type: "message.delta", delta: "shared" };
  const stringify = spyOn(JSON, "stringify");
  try {
    for (const send of senders) send(event);
    expect(stringify.mock.calls.filter(([v]) => v === event)).toHaveLength(1);
  } finally {
    stringify.mockRestore();
  }
  const frames = await Promise.all(readers.map(async (r) => new TextDecoder().decode((await r.read()).value)));
  expect(new Set(frames)).toEqual(new Set([`event: message.delta\ndata: {"type":"message.delta","delta":"shared"}\n\n`]));
  for (const r of readers) await r.cancel();
});

test("a reader that never reads is ended past the backlog, and its subscription stopped", async () => {
  let send!: (e: { type: string; delta?: string }) => void;
  let stopped = false;
  const res = sseResponse((s) => ((send = s), () => void (stopped = true)), "hello");
  const t0 = performance.now();
  for (let i = 0; i < MAX_BACKLOG_FRAMES * 3; i++) send({ type: "message.delta", delta: `d${i}` });
  expect(performance.now() - t0).toBeLessThan(1_000);
  expect(stopped).toBe(true);
  // what was queued before the cut is still readable, then the stream ends
  const text = await res.text();
  expect(text).toContain('"delta":"d0"');
  expect(text).not.toContain(`"delta":"d${MAX_BACKLOG_FRAMES * 2}"`);
});
