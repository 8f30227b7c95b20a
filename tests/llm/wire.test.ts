// The LLM client against the wire shapes real servers send (tests/support/provider-wires.ts):
// whatever the habit, the same calls, the same answer, and no reasoning in the answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openAiLlm } from "../../src/llm/openai";
import type { LlmEvent, ToolCall } from "../../src/llm/types";
import * as wire from "../support/provider-wires";
import { startScriptedLLM, type ScriptedLLM, type Step } from "../support/scripted-llm";

let server: ScriptedLLM;
beforeAll(async () => {
  server = await startScriptedLLM();
});
afterAll(() => server.close());

async function run(step: Step): Promise<{ text: string; reasoning: string; calls: ToolCall[]; truncated: boolean; usage: number }> {
  server.enqueue(step);
  const llm = openAiLlm({ baseUrl: server.url, apiKey: "k", model: "m", maxRetries: 0 });
  const out = { text: "", reasoning: "", calls: [] as ToolCall[], truncated: false, usage: 0 };
  for await (const ev of llm.stream({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal }) as AsyncIterable<LlmEvent>) {
    if (ev.type === "text") out.text += ev.delta;
    else if (ev.type === "reasoning") out.reasoning += ev.delta;
    else if (ev.type === "tool_calls") out.calls.push(...ev.calls);
    else if (ev.type === "truncated") out.truncated = true;
    else out.usage += ev.inputTokens;
  }
  return out;
}

const read = { name: "file_read", arguments: { path: "notes/todo.md" } };
const write = { name: "file_write", arguments: { path: "a.txt", content: "x, \"quoted\" {braces}" } };
const bare = (calls: ToolCall[]) => calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }));

describe("tool calls are assembled whatever the server's habit", () => {
  const habits: [string, (calls: wire.WireCall[]) => Step][] = [
    ["OpenAI's own shape", (c) => wire.openaiCalls(c)],
    ["the name repeated on every delta (Fireworks, NVIDIA NIM, llama-cpp-python)", (c) => wire.nameOnEveryDelta(c)],
    ["no index (Gemini, mistral.rs)", (c) => wire.noIndex(c)],
    ["every call at index 0 with its own id (Gemini behind proxies)", wire.indexZero],
    ["arguments as a JSON object (llama.cpp)", wire.argumentsAsObject],
    ["every call in one chunk, finished with stop (Ollama)", wire.ollamaOneChunk],
    ["one JSON completion for a streamed request (Ollama with tools)", (c) => wire.wholeCompletion({ calls: c })],
  ];
  for (const [habit, shape] of habits) {
    test(habit, async () => {
      const one = await run(shape([read]));
      expect(bare(one.calls)).toEqual([read]);
      const two = await run(shape([read, write]));
      expect(bare(two.calls)).toEqual([read, write]);
      expect(new Set(two.calls.map((c) => c.call_id)).size).toBe(2);
      expect(two.text).toBe("");
    });
  }

  test("text before the calls stays the answer", async () => {
    for (const step of [wire.nameOnEveryDelta([read], "Let me look. "), wire.noIndex([read], "Let me look. ")]) {
      const r = await run(step);
      expect(r.text).toBe("Let me look. ");
      expect(bare(r.calls)).toEqual([read]);
    }
  });
});

describe("reasoning never reaches the answer", () => {
  const thoughts = "The user greets me. I should greet back, briefly.";
  test("a leading <think> block, its tags cut across deltas (Ollama, LM Studio)", async () => {
    const r = await run(wire.thinkTags(thoughts, "Hello there!"));
    expect(r.text).toBe("Hello there!");
    expect(r.reasoning.trim()).toBe(thoughts);
  });

  test("a leading <thinking> block", async () => {
    const r = await run(wire.thinkTags(thoughts, "Hi!", { tag: "thinking" }));
    expect(r.text).toBe("Hi!");
    expect(r.reasoning.trim()).toBe(thoughts);
  });

  test("reasoning_content (DeepSeek, vLLM, llama.cpp) and reasoning (OpenRouter, Ollama)", async () => {
    for (const field of ["reasoning_content", "reasoning"] as const) {
      const r = await run(wire.reasoningField(field, thoughts, "Hello there!"));
      expect(r.text).toBe("Hello there!");
      expect(r.reasoning).toBe(thoughts);
    }
  });

  test("a <think> block before a tool call, and in a whole JSON completion", async () => {
    const r = await run(wire.thinkTags(thoughts, "", { calls: [read] }));
    expect(r.text).toBe("");
    expect(bare(r.calls)).toEqual([read]);
    const j = await run(wire.wholeCompletion({ content: `<think>${thoughts}</think>\n\nDone.`, reasoning: "" }));
    expect(j.text).toBe("Done.");
    expect(j.reasoning).toBe(thoughts);
  });
});

test("an answer cut at the token limit says so", async () => {
  const r = await run(wire.lengthCut("The first part of a long"));
  expect(r.text).toBe("The first part of a long");
  expect(r.truncated).toBe(true);
  const whole = await run(wire.wholeCompletion({ content: "Cut", finish: "length" }));
  expect(whole.truncated).toBe(true);
});

test("usage arrives from streams and whole completions alike", async () => {
  expect((await run(wire.lengthCut("x"))).usage).toBe(40);
  expect((await run(wire.wholeCompletion({ content: "x" }))).usage).toBe(40);
});
