// The agent loop on its own, with a scripted model value (no HTTP, no database): what it asks
// the model, the events it yields (every channel renders these), what it produces, and where
// it stops: done, paused on a caller tool, waiting for an approval or a connection, or failed.
import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { agentLoop, type LoopInput, type LoopOutcome } from "../../src/agent/loop";
import { TurnTrust } from "../../src/agent/trust";
import type { AgentEvent } from "../../src/agent/events";
import type { ApprovalPolicy } from "../../src/config/schema";
import { Calibrations } from "../../src/context/estimate";
import { ThreadContext } from "../../src/context/thread-context";
import type { ConversationItem, FunctionCallItem, PendingCall } from "../../src/conversation/items";
import { TurnError } from "../../src/errors";
import type { LlmEvent } from "../../src/llm/types";
import { noLog } from "../../src/log";
import { createSafety } from "../../src/safety";
import { ToolRegistry } from "../../src/tools/registry";
import { defineTool } from "../../src/tools/tool";
import { calls, says, scriptedModel, type ScriptedStep } from "../support/scripted-model";

const SECRET = "sk-loop-test-secret-0123456789";

/** What the tools did, in order. */
let ran: string[] = [];

function registry() {
  ran = [];
  return new ToolRegistry()
    .register(
      defineTool({
        name: "weather",
        description: "The weather in a city.",
        parameters: Type.Object({ city: Type.String() }),
        execute: async ({ city }) => (ran.push(`weather ${city}`), `21 °C in ${city}`),
      }),
    )
    .register(
      defineTool({
        name: "fetch_page",
        description: "Fetches a web page.",
        parameters: Type.Object({ url: Type.String() }),
        untrusted: true,
        egress: ({ url }) => new URL(url).host,
        execute: async ({ url }) => (ran.push(`fetch ${url}`), "Page text."),
      }),
    )
    .register(
      defineTool({
        name: "broken",
        description: "Crashes.",
        parameters: Type.Object({}),
        execute: async () => {
          throw new TypeError("x is undefined");
        },
      }),
    );
}

interface Run {
  events: AgentEvent[];
  outcome?: LoopOutcome;
  error?: unknown;
  produced: ConversationItem[];
  model: ReturnType<typeof scriptedModel>;
  checkpoints: number;
  egress: string[];
}

/** Runs one turn of the loop for "What is the weather?" to its end; `over` changes the input. */
async function run(
  script: ScriptedStep[],
  over: Partial<Omit<LoopInput, "policy">> & { policy?: Record<string, ApprovalPolicy>; tainted?: boolean; onEvent?: (e: AgentEvent) => void } = {},
): Promise<Run> {
  const model = scriptedModel(script);
  const { policy = {}, tainted = false, onEvent, ...rest } = over;
  const context = new ThreadContext(
    {
      llm: model,
      settings: { contextWindow: 32_000, maxOutputTokens: 1_000, memoryFlush: false },
      calibrations: new Calibrations(),
      noteTool: undefined,
      notes: undefined,
      redact: (t) => t,
      store: async () => {},
      log: noLog,
    },
    { threadId: "t", userId: "u", system: "You are helpful.", compaction: undefined, history: [], nextSeq: 0, policy: (t) => policy[t] ?? "auto" },
  );
  const r: Run = { events: [], produced: [{ type: "message", id: "in", role: "user", content: "What is the weather?" }], model, checkpoints: 0, egress: [] };
  const loop = agentLoop({
    llm: model,
    tools: registry(),
    external: [],
    context,
    pending: [],
    maxSteps: 5,
    ctx: { userId: "u", threadId: "t", signal: new AbortController().signal },
    produced: r.produced,
    safety: createSafety({ secrets: [SECRET] }),
    policy: (t) => policy[t] ?? "auto",
    trust: new TurnTrust({ tainted, userWords: ["What is the weather?"], destinations: () => undefined }),
    checkpoint: async () => void r.checkpoints++,
    egressed: (call, destination, by) => r.egress.push(`${call.name} ${destination} ${by}`),
    ...rest,
  });
  try {
    for (;;) {
      const next = await loop.next();
      if (next.done) {
        r.outcome = next.value;
        break;
      }
      r.events.push(next.value);
      onEvent?.(next.value);
    }
  } catch (e) {
    r.error = e;
  }
  return r;
}

const types = (r: Run) => r.events.map((e) => e.type);
/** The text deltas' types: the redactor may hold back the end of a delta until the message ends. */
const deltas = (r: Run) => r.events.flatMap((e) => (e.type === "text.delta" ? [e.type] : []));
const text = (r: Run) => r.events.flatMap((e) => (e.type === "text.delta" ? [e.delta] : [])).join("");
const toolMessages = (r: Run, n: number) => r.model.requests[n]!.messages.filter((m) => m.role === "tool").map((m) => m.content);
/** A call as the loop gets it back from a gate: the call it paused on. */
const pendingOf = (r: Run): PendingCall[] => (r.outcome && "pending" in r.outcome ? r.outcome.pending : []);

describe("an answer", () => {
  test("streams as one message: started, deltas, completed; the model got the thread and the tools", async () => {
    const r = await run([[{ type: "text", delta: "It is " }, { type: "text", delta: "sunny." }]]);
    expect(r.outcome).toEqual({ kind: "done" });
    expect(types(r)).toEqual(["message.started", "text.delta", "text.delta", "message.completed"]);
    const [started, , , completed] = r.events as [any, any, any, any];
    expect(completed.item).toMatchObject({ type: "message", id: started.itemId, role: "assistant", content: "It is sunny." });
    expect(r.produced.at(-1)).toBe(completed.item);
    expect(r.model.requests).toHaveLength(1);
    expect(r.model.requests[0]!.messages).toEqual([
      { role: "system", content: "You are helpful." },
      { role: "user", content: "What is the weather?" },
    ]);
    expect(r.model.requests[0]!.tools.map((t) => t.name)).toEqual(["weather", "fetch_page", "broken"]);
  });

  test("a secret split across deltas never streams out, and the stored message has it redacted", async () => {
    const r = await run([[{ type: "text", delta: `The key is ${SECRET.slice(0, 12)}` }, { type: "text", delta: `${SECRET.slice(12)}, keep it.` }]]);
    expect(text(r)).not.toContain(SECRET.slice(0, 12));
    expect(text(r)).toContain("keep it.");
    expect(JSON.stringify(r.produced)).not.toContain(SECRET);
  });

  test("usage is passed on as an event", async () => {
    const r = await run([[...says("Hi."), { type: "usage", inputTokens: 40, outputTokens: 3, model: "scripted-model" }]]);
    expect(r.events).toContainEqual({ type: "usage", inputTokens: 40, outputTokens: 3, model: "scripted-model" });
  });

  test("reasoning is shown as it comes under its own id, and is neither stored nor sent back", async () => {
    const reasoning: LlmEvent[] = [
      { type: "reasoning", delta: "The user wants " },
      { type: "reasoning", delta: "the weather." },
    ];
    const r = await run([[...reasoning, ...calls(["weather", { city: "Oslo" }])], says("Sunny in Oslo.")]);
    const thoughts = r.events.filter((e) => e.type === "reasoning.delta") as { itemId: string; delta: string }[];
    expect(thoughts.map((e) => e.delta).join("")).toBe("The user wants the weather.");
    expect(new Set(thoughts.map((e) => e.itemId)).size).toBe(1);
    expect(r.produced.map((i) => i.id)).not.toContain(thoughts[0]!.itemId);
    expect(JSON.stringify(r.produced)).not.toContain("The user wants");
    expect(JSON.stringify(r.model.requests[1]!.messages)).not.toContain("The user wants");
  });
});

describe("tool calls", () => {
  test("a call runs between two model steps: started, completed, its output in the next request", async () => {
    const r = await run([calls(["weather", { city: "Oslo" }]), says("Sunny in Oslo.")]);
    expect(r.outcome).toEqual({ kind: "done" });
    expect(ran).toEqual(["weather Oslo"]);
    expect(types(r)).toEqual(["tool.started", "tool.completed", "message.started", "text.delta", "message.completed"]);
    const [started, completed] = r.events as [any, any];
    expect(started.item).toMatchObject({ type: "function_call", name: "weather", arguments: '{"city":"Oslo"}', external: false });
    expect(completed).toMatchObject({ isError: false, item: { type: "function_call_output", call_id: started.item.call_id } });
    expect(completed.item.output).toContain("21 °C in Oslo");
    expect(r.produced.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "message"]);
    expect(toolMessages(r, 1)).toEqual([completed.item.output]);
    // stored before the call runs and once it has
    expect(r.checkpoints).toBe(2);
  });

  test("bad arguments and an unknown tool are errors for the model to read; the turn goes on", async () => {
    const r = await run([calls(["weather", { town: "Oslo" }], ["teleport", {}]), says("Sorry.")]);
    expect(ran).toEqual([]);
    const done = r.events.filter((e) => e.type === "tool.completed") as { item: { output: string }; isError: boolean }[];
    expect(done.map((e) => e.isError)).toEqual([true, true]);
    expect(done[0]!.item.output).toContain("Error: invalid arguments for weather");
    expect(done[1]!.item.output).toContain("Error: there is no tool named teleport.");
    expect(r.outcome).toEqual({ kind: "done" });
  });

  test("a tool that crashes fails the turn with tool_error", async () => {
    const r = await run([calls(["broken", {}])]);
    expect(r.error).toBeInstanceOf(TurnError);
    expect(r.error).toMatchObject({ code: "tool_error", message: "The tool broken crashed: x is undefined" });
  });

  test("a model that keeps calling tools stops at maxSteps", async () => {
    const r = await run([calls(["weather", { city: "A" }]), calls(["weather", { city: "B" }])], { maxSteps: 2 });
    expect(r.model.requests).toHaveLength(2);
    expect(r.error).toMatchObject({ code: "max_steps", message: "The agent stopped after 2 model steps without an answer." });
  });

  test("a caller's tool pauses the turn on its call", async () => {
    const lookup = { name: "lookup", description: "Looks up a customer.", parameters: { type: "object" } };
    const r = await run([calls(["lookup", { id: 7 }])], { external: [lookup] });
    expect(r.model.requests[0]!.tools.map((t) => t.name)).toContain("lookup");
    expect(types(r)).toEqual(["function_call"]);
    const call = (r.events[0] as { item: FunctionCallItem }).item;
    expect(call).toMatchObject({ name: "lookup", arguments: '{"id":7}', external: true });
    expect(r.outcome).toEqual({ kind: "paused", call, pending: [] });
  });
});

describe("gates", () => {
  test("policy ask: the turn waits for approval of the call; approved, it runs and the model goes on", async () => {
    const asked = await run([calls(["weather", { city: "Oslo" }])], { policy: { weather: "ask" } });
    expect(types(asked)).toEqual(["approval.required"]);
    expect(asked.outcome).toMatchObject({ kind: "approval", call: { name: "weather" } });
    expect(ran).toEqual([]);
    const pending = pendingOf(asked);
    const approved = await run([says("Sunny in Oslo.")], { policy: { weather: "ask" }, pending, decision: { callId: pending[0]!.call_id, approve: true } });
    expect(ran).toEqual(["weather Oslo"]);
    expect(types(approved)).toEqual(["tool.started", "tool.completed", "message.started", "text.delta", "message.completed"]);
  });

  test("denied, the call does not run and the model reads why", async () => {
    const asked = await run([calls(["weather", { city: "Oslo" }])], { policy: { weather: "ask" } });
    const pending = pendingOf(asked);
    const denied = await run([says("As you wish.")], { policy: { weather: "ask" }, pending, decision: { callId: pending[0]!.call_id, approve: false } });
    expect(ran).toEqual([]);
    expect(denied.events.find((e) => e.type === "tool.completed")).toMatchObject({ isError: true, item: { output: expect.stringContaining("Error: the user denied this call of weather.") } });
    expect(toolMessages(denied, 0)[0]).toContain("the user denied this call of weather");
  });

  test("policy deny: the tool is not offered, and a call of it is refused", async () => {
    const r = await run([calls(["weather", { city: "Oslo" }]), says("I cannot.")], { policy: { weather: "deny" } });
    expect(r.model.requests[0]!.tools.map((t) => t.name)).not.toContain("weather");
    expect(ran).toEqual([]);
    expect(r.events.find((e) => e.type === "tool.completed")).toMatchObject({ isError: true, item: { output: expect.stringContaining("weather is disabled by the operator's policy") } });
  });

  test("a tool whose extension is not connected: the turn waits for the connection, before any approval", async () => {
    const authorize = async (tool: string) => (tool === "weather" ? { extension: "meteo", url: "https://auth.example/connect" } : undefined);
    const r = await run([calls(["weather", { city: "Oslo" }])], { policy: { weather: "ask" }, authorize });
    expect(r.events).toEqual([{ type: "auth.required", call: expect.objectContaining({ name: "weather" }), extension: "meteo", url: "https://auth.example/connect" }]);
    expect(r.outcome).toMatchObject({ kind: "oauth", extension: "meteo", url: "https://auth.example/connect", call: { name: "weather" } });
    expect(ran).toEqual([]);
  });

  test("a turn that read a page asks before a call could carry data out; approved, the egress is logged as the user's", async () => {
    const asked = await run([calls(["fetch_page", { url: "https://news.example/a" }])], { tainted: true });
    expect(asked.events).toEqual([{ type: "approval.required", call: expect.objectContaining({ name: "fetch_page" }), destination: "news.example" }]);
    expect(asked.outcome).toMatchObject({ kind: "approval", review: { destination: "news.example" } });
    const pending = pendingOf(asked);
    const approved = await run([says("Read it.")], { tainted: true, pending, decision: { callId: pending[0]!.call_id, approve: true } });
    expect(ran).toEqual(["fetch https://news.example/a"]);
    expect(approved.egress).toEqual(["fetch_page news.example user"]);
  });

  test("an untrusted output taints the turn: the next call out needs approval", async () => {
    const r = await run([calls(["fetch_page", { url: "https://news.example/a" }]), calls(["fetch_page", { url: "https://evil.example/x" }])]);
    expect(ran).toEqual(["fetch https://news.example/a"]);
    expect(r.egress).toEqual(["fetch_page news.example untainted turn"]);
    expect(r.events.at(-1)).toMatchObject({ type: "approval.required", destination: "evil.example" });
    expect(r.outcome).toMatchObject({ kind: "approval" });
  });
});

describe("errors and cuts", () => {
  test("a model error after some text: the text is kept, marked incomplete, and the error is thrown", async () => {
    const failure = new TurnError("llm_error", "The model went away.");
    const r = await run([{ events: says("Half an ans"), error: failure }]);
    expect(r.error).toBe(failure);
    expect(types(r)).toEqual(["message.started", ...deltas(r), "message.completed"]);
    expect(text(r)).toBe("Half an ans");
    expect(r.produced.at(-1)).toMatchObject({ role: "assistant", content: "Half an ans", status: "incomplete" });
  });

  test("a prompt the provider finds too long is fitted and asked once more", async () => {
    const tooLong = new TurnError("llm_error", "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.");
    const r = await run([tooLong, says("Fits now.")]);
    expect(r.model.requests).toHaveLength(2);
    expect(r.outcome).toEqual({ kind: "done" });
    expect(text(r)).toBe("Fits now.");
  });

  test("cut at the token limit: the answer so far is kept as incomplete and calls it was writing are not run", async () => {
    const r = await run([[...says("The weather is"), ...calls(["weather", { city: "Oslo" }]), { type: "truncated" }]]);
    expect(r.outcome).toEqual({ kind: "done" });
    expect(ran).toEqual([]);
    expect(types(r)).toEqual(["message.started", ...deltas(r), "message.completed"]);
    expect(text(r)).toBe("The weather is");
    expect(r.produced.at(-1)).toMatchObject({ content: "The weather is", status: "incomplete" });
  });

  test("cut before any text: an empty incomplete message says so", async () => {
    const r = await run([[{ type: "truncated" }]]);
    expect(types(r)).toEqual(["message.started", "message.completed"]);
    expect(r.produced.at(-1)).toMatchObject({ role: "assistant", content: "", status: "incomplete" });
  });

  test("a cancelled turn ends with the signal's reason, mid-step", async () => {
    const stop = new AbortController();
    const reason = new TurnError("cancelled", "Cancelled.");
    const r = await run([{ events: says("Thinking"), hang: true }], {
      ctx: { userId: "u", threadId: "t", signal: stop.signal },
      onEvent: (e) => e.type === "text.delta" && stop.abort(reason),
    });
    expect(r.error).toBe(reason);
    expect(r.produced.at(-1)).toMatchObject({ content: "Thinking", status: "incomplete" });
  });
});
