// What real OpenAI-compatible servers send, replayed byte for byte by the scripted LLM (a `raw`
// step). Each recording follows a shape a public issue or doc shows; the link is beside it.
// Only the wire differs from one to the next: the answer and the calls are the test's own.
import type { Step } from "./scripted-llm";

export interface WireCall {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

const frame = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-wire", object: "chat.completion.chunk", created: 1_700_000_000, model: "wire-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = (prompt = 40, completion = 12) =>
  `data: ${JSON.stringify({ id: "chatcmpl-wire", object: "chat.completion.chunk", created: 1_700_000_000, model: "wire-model", choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`;
const sse = (frames: string[]): Step => ({ raw: [frame({ role: "assistant", content: "" }), ...frames, usage(), "data: [DONE]\n\n"].join("") });

/** `s` in `n` pieces of about the same length (the way arguments trickle in). */
function pieces(s: string, n = 3): string[] {
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}
const json = (c: WireCall) => JSON.stringify(c.arguments);
const idOf = (c: WireCall, i: number) => c.id ?? `call_wire_${i}`;

/** Text first, word by word, as every server streams it. */
const textFrames = (text: string) => (text ? text.split(/(?<=\s)/).map((w) => frame({ content: w })) : []);

/**
 * The OpenAI shape, for comparison: the name and id once, then argument pieces by index.
 * https://platform.openai.com/docs/guides/function-calling#streaming
 */
export function openaiCalls(calls: WireCall[], text = ""): Step {
  return sse([
    ...textFrames(text),
    ...calls.flatMap((c, index) => [
      frame({ tool_calls: [{ index, id: idOf(c, index), type: "function", function: { name: c.name, arguments: "" } }] }),
      ...pieces(json(c)).map((p) => frame({ tool_calls: [{ index, function: { arguments: p } }] })),
    ]),
    frame({}, "tool_calls"),
  ]);
}

/**
 * The function name (and id) repeated on every delta: Fireworks, NVIDIA NIM and
 * llama-cpp-python do this; appending names gave `read_fileread_file`
 * (https://github.com/NousResearch/hermes-agent/pull/12230, issue #8259 there).
 */
export function nameOnEveryDelta(calls: WireCall[], text = ""): Step {
  return sse([
    ...textFrames(text),
    ...calls.flatMap((c, index) =>
      pieces(json(c)).map((p) => frame({ tool_calls: [{ index, id: idOf(c, index), type: "function", function: { name: c.name, arguments: p } }] })),
    ),
    frame({}, "tool_calls"),
  ]);
}

/**
 * No `index` at all: Gemini's OpenAI endpoint (and mistral.rs) send each call with its id and
 * continue its arguments in index-less, id-less deltas, and finish a tool-call answer with
 * `stop` (https://github.com/open-webui/computer/issues/224).
 */
export function noIndex(calls: WireCall[], text = ""): Step {
  return sse([
    ...textFrames(text),
    ...calls.flatMap((c, i) => {
      const [first = "", ...rest] = pieces(json(c));
      return [
        frame({ tool_calls: [{ id: idOf(c, i), type: "function", function: { name: c.name, arguments: first } }] }),
        ...rest.map((p) => frame({ tool_calls: [{ function: { arguments: p } }] })),
      ];
    }),
    frame({}, "stop"),
  ]);
}

/**
 * Parallel calls all at `index: 0`, each with its own id: Gemini through OpenAI-compatible
 * proxies (https://github.com/NousResearch/hermes-agent/pull/12930,
 * https://github.com/su-kaka/gcli2api/pull/406).
 */
export function indexZero(calls: WireCall[]): Step {
  return sse([
    ...calls.flatMap((c, i) => [
      frame({ tool_calls: [{ index: 0, id: idOf(c, i), type: "function", function: { name: c.name, arguments: "" } }] }),
      ...pieces(json(c)).map((p) => frame({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    ]),
    frame({}, "tool_calls"),
  ]);
}

/**
 * `arguments` as a JSON object, not a string: llama.cpp's server did this
 * (https://github.com/ggml-org/llama.cpp/issues/20198).
 */
export function argumentsAsObject(calls: WireCall[]): Step {
  return sse([
    ...calls.map((c, index) => frame({ tool_calls: [{ index, id: idOf(c, index), type: "function", function: { name: c.name, arguments: c.arguments } }] })),
    frame({}, "tool_calls"),
  ]);
}

/**
 * Ollama's OpenAI endpoint: every call whole in one chunk, and the answer finished with `stop`
 * (https://github.com/ollama/ollama/issues/11633, https://github.com/ollama/ollama/pull/7963).
 */
export function ollamaOneChunk(calls: WireCall[]): Step {
  return sse([
    frame({ content: "", tool_calls: calls.map((c, index) => ({ index, id: idOf(c, index), type: "function", function: { name: c.name, arguments: json(c) } })) }),
    frame({}, "stop"),
  ]);
}

/**
 * A streamed request answered with one JSON completion: Ollama did this whenever tools were
 * offered (https://github.com/ollama/ollama/issues/9092). `content` may carry a `<think>` block.
 */
export function wholeCompletion(opts: { content?: string; calls?: WireCall[]; reasoning?: string; finish?: string }): Step {
  const calls = opts.calls ?? [];
  const message = {
    role: "assistant",
    content: opts.content ?? null,
    ...(opts.reasoning ? { reasoning_content: opts.reasoning } : {}),
    ...(calls.length ? { tool_calls: calls.map((c, i) => ({ id: idOf(c, i), type: "function", function: { name: c.name, arguments: json(c) } })) } : {}),
  };
  const body = {
    id: "chatcmpl-wire",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "wire-model",
    choices: [{ index: 0, message, finish_reason: opts.finish ?? (calls.length ? "tool_calls" : "stop") }],
    usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
  };
  return { raw: JSON.stringify(body), contentType: "application/json" };
}

/**
 * A reasoning model behind Ollama or LM Studio: its thoughts in the content as a leading
 * `<think>…</think>` block, the tags cut across deltas as tokens fall
 * (https://github.com/deepseek-ai/DeepSeek-R1/issues/342, https://github.com/RooCodeInc/Roo-Code/pull/1566).
 */
export function thinkTags(reasoning: string, answer: string, opts: { tag?: "think" | "thinking"; calls?: WireCall[] } = {}): Step {
  const tag = opts.tag ?? "think";
  const whole = `<${tag}>\n${reasoning}\n</${tag}>\n\n${answer}`;
  // cut every 3 characters, so that both tags are split across deltas
  const frames = pieces(whole, Math.ceil(whole.length / 3)).map((p) => frame({ content: p }));
  const calls = opts.calls ?? [];
  const callFrames = calls.map((c, index) => frame({ tool_calls: [{ index, id: idOf(c, index), type: "function", function: { name: c.name, arguments: json(c) } }] }));
  return sse([...frames, ...callFrames, frame({}, calls.length ? "tool_calls" : "stop")]);
}

/**
 * Reasoning in a field of its own: `reasoning_content` (DeepSeek's API, vLLM and llama.cpp:
 * https://api-docs.deepseek.com/guides/reasoning_model) or `reasoning` (OpenRouter and Ollama:
 * https://openrouter.ai/docs/use-cases/reasoning-tokens).
 */
export function reasoningField(field: "reasoning_content" | "reasoning", reasoning: string, answer: string): Step {
  return sse([
    ...reasoning.split(/(?<=\s)/).map((w) => frame({ content: null, [field]: w })),
    ...textFrames(answer),
    frame({}, "stop"),
  ]);
}

/**
 * The answer cut at the provider's token limit: `finish_reason: "length"`
 * (https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices).
 */
export function lengthCut(text: string): Step {
  return sse([...textFrames(text), frame({}, "length")]);
}
