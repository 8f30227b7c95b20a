/** What a piece of content holds: the model's reasoning, and the answer proper. */
export interface Split {
  reasoning: string;
  text: string;
}

const OPENERS = ["<think>", "<thinking>"] as const;
const NONE: Split = { reasoning: "", text: "" };

/** The longest end of `s` that could be the start of `tag` (a tag cut across deltas). */
function partialTagAt(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (s.endsWith(tag.slice(0, n))) return s.length - n;
  return s.length;
}

/**
 * Splits a model's streamed content into reasoning and answer. Reasoning models served by
 * Ollama, LM Studio, llama.cpp or vLLM without a reasoning parser put their thoughts in the
 * content as a leading `<think>…</think>` (DeepSeek-R1, QwQ, Qwen3) or `<thinking>…</thinking>`
 * block (https://github.com/deepseek-ai/DeepSeek-R1/issues/342,
 * https://github.com/RooCodeInc/Roo-Code/pull/1566). A tag may be cut across deltas, so the
 * start of the content is held back until it is clear whether a block opens. Once the answer
 * has begun, deltas pass straight through.
 */
export class ThinkSplitter {
  #state: "start" | "thinking" | "answer" = "start";
  #held = "";
  #close = "";
  /** The answer right after a block starts without the blank lines that followed the block. */
  #trimNext = false;

  push(delta: string): Split {
    if (this.#state === "answer") return this.#answer(delta);
    this.#held += delta;
    if (this.#state === "start") {
      const lead = this.#held.trimStart();
      if (!lead) return NONE;
      const opener = OPENERS.find((t) => lead.startsWith(t));
      if (!opener) {
        if (OPENERS.some((t) => t.startsWith(lead))) return NONE; // "<thi" may yet open a block
        this.#state = "answer";
        const text = this.#held;
        this.#held = "";
        return { reasoning: "", text };
      }
      this.#state = "thinking";
      this.#close = `</${opener.slice(1)}`;
      this.#held = lead.slice(opener.length);
    }
    const end = this.#held.indexOf(this.#close);
    if (end < 0) {
      // all but what could be the start of the closing tag is reasoning already
      const cut = partialTagAt(this.#held, this.#close);
      const reasoning = this.#held.slice(0, cut);
      this.#held = this.#held.slice(cut);
      return { reasoning, text: "" };
    }
    const reasoning = this.#held.slice(0, end);
    const rest = this.#held.slice(end + this.#close.length);
    this.#held = "";
    this.#state = "answer";
    this.#trimNext = true;
    return { reasoning, text: this.#answer(rest).text };
  }

  /** What is held back at the end of the stream: an unfinished tag is text, an unclosed block reasoning. */
  flush(): Split {
    const held = this.#held;
    this.#held = "";
    if (this.#state === "thinking") return { reasoning: held, text: "" };
    this.#state = "answer";
    return { reasoning: "", text: held };
  }

  #answer(delta: string): Split {
    if (!this.#trimNext) return { reasoning: "", text: delta };
    const text = delta.trimStart();
    if (text) this.#trimNext = false;
    return { reasoning: "", text };
  }
}

/**
 * The text of a content value: a string, or (Mistral's reasoning models) an array of parts
 * where `thinking` parts are reasoning and `text` parts the answer
 * (https://docs.mistral.ai/capabilities/reasoning/).
 */
export function contentParts(content: unknown): Split {
  if (typeof content === "string") return { reasoning: "", text: content };
  if (!Array.isArray(content)) return NONE;
  const out = { reasoning: "", text: "" };
  for (const part of content as { type?: unknown; text?: unknown; thinking?: unknown }[]) {
    if (part?.type === "text" && typeof part.text === "string") out.text += part.text;
    else if (part?.type === "thinking") out.reasoning += contentParts(part.thinking).text;
  }
  return out;
}
