// The chat event hub on the agent's bus: every channel's turns reach their user's streams,
// deltas are gathered over 50 ms (the first at once), order within a turn holds, prompts of
// channels where nobody answers them are not shown, and users without a stream cost nothing.
import { expect, test } from "bun:test";
import { TurnBus, type TurnInfo } from "../../src/agent/bus";
import { COALESCE_MS, ChatEventHub, type ChatEvent } from "../../src/gateway/events";

/** The chat events in a chunk of SSE frames. */
const decode = (frames: Uint8Array): ChatEvent[] =>
  new TextDecoder()
    .decode(frames)
    .split("\n\n")
    .filter(Boolean)
    .map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
/** Events are written at the end of the tick they were sent in. */
const tick = () => new Promise<void>((r) => queueMicrotask(r));

const info = (over: Partial<TurnInfo> = {}): TurnInfo => ({ id: "resp_1", threadId: "t1", userId: "u", channel: "webhook", surfacesGates: false, startedAt: Date.now(), ...over });
const started = (t: TurnInfo) => ({ type: "turn.started" as const, turn: { id: t.id, threadId: t.threadId, createdAt: 0, input: [] }, request: {} as any });

test("deltas: the first at once, then one event per message every 50 ms, order kept", async () => {
  const bus = new TurnBus();
  const hub = new ChatEventHub(bus);
  const seen: ChatEvent[] = [];
  const chunks: number[] = [];
  hub.subscribe("u", (f) => (seen.push(...decode(f)), chunks.push(decode(f).length)));
  const t = info({ origin: { jobId: "job-1" } });
  bus.publish(t, started(t));
  bus.publish(t, { type: "message.started", itemId: "m" });
  for (let i = 0; i < 100; i++) bus.publish(t, { type: "text.delta", itemId: "m", delta: `${i} ` });
  await tick();
  // what was sent in one tick goes as one chunk
  expect(chunks).toEqual([3]);
  const text = Array.from({ length: 100 }, (_, i) => `${i} `).join("");
  expect(seen.map((e) => e.type)).toEqual(["turn.started", "message.started", "message.delta"]);
  expect(seen[0]).toMatchObject({ channel: "webhook", job_id: "job-1" });
  await Bun.sleep(COALESCE_MS * 2);
  expect(seen.map((e) => e.type)).toEqual(["turn.started", "message.started", "message.delta", "message.delta"]);
  // gathered again, then sent before the message's end by the end itself
  bus.publish(t, { type: "text.delta", itemId: "m", delta: "x" });
  bus.publish(t, { type: "text.delta", itemId: "m", delta: "y" });
  bus.publish(t, { type: "message.completed", item: { type: "message", id: "m", role: "assistant", content: `${text}xy` } });
  await tick();
  const types = seen.map((e) => e.type);
  expect(types.slice(-2)).toEqual(["message.delta", "message.completed"]);
  const deltas = seen.flatMap((e) => (e.type === "message.delta" ? [e.delta] : []));
  expect(deltas.join("")).toBe(`${text}xy`);
  expect(deltas.length).toBeLessThanOrEqual(4);
});

test("an approval prompt of a turn nobody can answer here (the Responses API) is not shown; of chat turns it is", async () => {
  const bus = new TurnBus();
  const hub = new ChatEventHub(bus);
  const seen: ChatEvent[] = [];
  hub.subscribe("u", (f) => seen.push(...decode(f)));
  const call = { call_id: "c", name: "web_fetch", arguments: "{}" };
  bus.publish(info({ channel: "responses" }), { type: "approval.required", call });
  bus.publish(info({ channel: "chat", surfacesGates: true, id: "resp_2" }), { type: "approval.required", call });
  await tick();
  expect(seen).toEqual([{ type: "approval.required", thread_id: "t1", response_id: "resp_2", call_id: "c", tool: "web_fetch", arguments: "{}" }]);
});

test("every one of a user's streams gets the same bytes, serialised once; other users' turns never reach them", async () => {
  const bus = new TurnBus();
  const hub = new ChatEventHub(bus);
  const got: Uint8Array[][] = Array.from({ length: 500 }, () => []);
  const stops = got.map((list) => hub.subscribe("u", (f) => list.push(f)));
  bus.publish(info({ userId: "someone-else" }), started(info()));
  const t = info();
  bus.publish(t, started(t));
  await tick();
  expect(got.every((list) => list.length === 1 && list[0] === got[0]![0])).toBe(true);
  expect(decode(got[0]![0]!)).toEqual([{ type: "turn.started", thread_id: "t1", response_id: "resp_1", channel: "webhook" }]);
  for (const stop of stops) stop();
  bus.publish(t, started(t));
  await tick();
  expect(got.every((list) => list.length === 1)).toBe(true);
});
