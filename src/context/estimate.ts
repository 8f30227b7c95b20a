import type { ConversationItem } from "../conversation/items";
import type { ChatMessage, ToolSpec } from "../llm/types";

/**
 * Token counts estimated from characters, with no tokenizer table in memory. ASCII text runs
 * at about 4 characters a token in English and 3 in code and JSON; we take 3.2. Other
 * characters (accents, CJK, emoji) count a token each, which over-counts Latin accents a
 * little and counts CJK about right. The provider's reported `prompt_tokens` then scales
 * these raw figures (see Calibration).
 */
const ASCII_CHARS_PER_TOKEN = 3.2;
/** Role markers and separators a chat template adds around each message. */
const MESSAGE_OVERHEAD = 4;
/** What the provider adds around each tool definition. */
const TOOL_OVERHEAD = 8;
/** An image part, whatever its size: OpenAI's price of a high-detail 512 px tile set. */
const IMAGE_TOKENS = 765;

/** Any character outside ASCII: most text has none, and is then measured by its length alone. */
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The last long texts measured: a turn measures its system prompt three times, the same string
 * each time. Compared, not looked up in a map (src/memo.ts): most long texts are measured
 * once, and hashing each would read it a second time.
 */
const LONG_TEXT = 512;
const recent: { text: string; tokens: number }[] = [];

export function rawTextTokens(text: string): number {
  if (text.length < LONG_TEXT) return measureText(text);
  for (const r of recent) if (r.text === text) return r.tokens;
  const tokens = measureText(text);
  recent.unshift({ text, tokens });
  recent.length = Math.min(recent.length, 2);
  return tokens;
}

function measureText(text: string): number {
  if (!NON_ASCII.test(text)) return Math.ceil(text.length / ASCII_CHARS_PER_TOKEN);
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) ascii++;
    else if (c < 0xd800 || c > 0xdbff) other++; // a surrogate pair counts once
  }
  return Math.ceil(ascii / ASCII_CHARS_PER_TOKEN + other);
}

/** How many characters of mostly-ASCII text make about `tokens` raw tokens. */
export function charsForTokens(tokens: number): number {
  return Math.max(0, Math.floor(tokens * ASCII_CHARS_PER_TOKEN));
}

/** A message's content: a string, or parts (text and images) as some providers take them. */
function contentTokens(content: unknown): number {
  if (typeof content === "string") return rawTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content as { type?: string; text?: unknown }[]) {
    if (typeof part?.text === "string") n += rawTextTokens(part.text);
    else if (part?.type === "image_url" || part?.type === "input_image") n += IMAGE_TOKENS;
  }
  return n;
}

export function rawMessageTokens(m: ChatMessage): number {
  let n = MESSAGE_OVERHEAD + contentTokens(m.content);
  if (m.role === "assistant" && m.tool_calls) {
    for (const c of m.tool_calls) n += MESSAGE_OVERHEAD + rawTextTokens(c.function.name) + rawTextTokens(c.function.arguments);
  }
  return n;
}

/** Items are never changed once made: each is measured once (the thread cache keeps them). */
const measured = new WeakMap<ConversationItem, number>();

/** A stored item as it goes into a request (a call joins its assistant message: about the same). */
export function rawItemTokens(item: ConversationItem): number {
  let n = measured.get(item);
  if (n !== undefined) return n;
  if (item.type === "message") n = MESSAGE_OVERHEAD + rawTextTokens(item.content) + IMAGE_TOKENS * (item.images?.length ?? 0);
  else if (item.type === "function_call") n = MESSAGE_OVERHEAD + rawTextTokens(item.name) + rawTextTokens(item.arguments);
  else n = MESSAGE_OVERHEAD + rawTextTokens(item.output) + (item.images?.length ? MESSAGE_OVERHEAD + IMAGE_TOKENS * item.images.length : 0);
  measured.set(item, n);
  return n;
}

/**
 * A tool's spec is one object for as long as the tool is registered (the registry keeps its
 * list; a re-registered MCP tool brings a new one), and its parameters too: each measured once.
 */
const measuredSpecs = new WeakMap<ToolSpec, number>();
const measuredParameters = new WeakMap<object, number>();

export function rawToolTokens(tools: readonly ToolSpec[]): number {
  let n = 0;
  for (const t of tools) {
    let spec = measuredSpecs.get(t);
    if (spec === undefined) {
      let params = measuredParameters.get(t.parameters);
      if (params === undefined) measuredParameters.set(t.parameters, (params = rawTextTokens(JSON.stringify(t.parameters))));
      // the name and description as JSON strings, with the keys around them
      measuredSpecs.set(t, (spec = TOOL_OVERHEAD + params + rawTextTokens(t.name) + rawTextTokens(t.description) + 12));
    }
    n += spec;
  }
  return n;
}

/**
 * Scales raw estimates to what the provider counts. After each request whose usage the
 * provider reports, the factor moves to `reported / raw`: at once when the provider counts
 * more than we thought (an overflow costs a failed request), a fifth of the way when it
 * counts less (one short request must not make us bold).
 */
export class Calibration {
  #factor = 1;

  get factor(): number {
    return this.#factor;
  }

  /** Tokens the provider will likely count for text whose raw estimate is `raw`. */
  scale(raw: number): number {
    return Math.ceil(raw * this.#factor);
  }

  observe(raw: number, reported: number): void {
    // tiny requests say more about the template's fixed cost than about the text
    if (raw < 64 || reported <= 0) return;
    // a provider that counts far less than we do is not followed all the way: being wrong that
    // way costs a failed request, being cautious only some room
    const ratio = Math.min(4, Math.max(0.5, reported / raw));
    this.#factor = ratio > this.#factor ? ratio : this.#factor * 0.8 + ratio * 0.2;
  }

  /** The provider refused a request as too long: count a quarter more from now on. */
  overflowed(raw: number, reported?: number): void {
    const byReport = reported && raw > 0 ? reported / raw : 0;
    this.#factor = Math.min(4, Math.max(this.#factor * 1.25, byReport * 1.05));
  }
}

/** One calibration per model: a summarising model may count differently from the turn model. */
export class Calibrations {
  readonly #byModel = new Map<string, Calibration>();

  for(model: string | undefined): Calibration {
    const key = model ?? "";
    let c = this.#byModel.get(key);
    if (!c) this.#byModel.set(key, (c = new Calibration()));
    return c;
  }
}
