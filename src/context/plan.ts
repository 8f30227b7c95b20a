import type { ConversationItem } from "../conversation/items";
import { charsForTokens } from "./estimate";

/** An item as it would go into a request, with its estimated tokens. */
export interface Sized {
  item: ConversationItem;
  tokens: number;
}

/**
 * Where a thread's items may be cut: before index i, when every `function_call` before i has
 * its output before i too (or has none anywhere: its turn died and it gets a placeholder).
 * `items` is the whole view, this turn's items included, so that a call whose output this
 * turn brings (a resumed caller tool) is never cut from it. `turnStart` marks cuts before a
 * user message, the ones that leave whole turns on both sides. `awaited` is the call the
 * thread's gate waits on: its output is still to come, so nothing after it may be cut.
 */
export function safeCuts(items: ConversationItem[], awaited?: string): { index: number; turnStart: boolean }[] {
  const outputAt = new Map<string, number>();
  items.forEach((it, i) => {
    if (it.type === "function_call_output") outputAt.set(it.call_id, i);
  });
  const cuts: { index: number; turnStart: boolean }[] = [];
  let openUntil = -1; // the last index some call before here waits for
  for (let i = 0; i <= items.length; i++) {
    if (i > openUntil) {
      const it = items[i];
      cuts.push({ index: i, turnStart: it?.type === "message" && it.role === "user" });
    }
    const it = items[i];
    if (it?.type === "function_call") {
      openUntil = Math.max(openUntil, it.call_id === awaited ? items.length : (outputAt.get(it.call_id) ?? -1));
    }
  }
  return cuts;
}

/**
 * Where to cut the compactable part of a thread (`history`, stored items; `current` is this
 * turn's and always stays) so that what is kept takes at most `keep` tokens: the earliest
 * turn boundary that does it, else the earliest step boundary, else as late as the tool
 * pairs allow. 0 means nothing can be summarised.
 */
export function chooseCut(history: Sized[], current: ConversationItem[], keep: number, awaited?: string): number {
  const cuts = safeCuts([...history.map((s) => s.item), ...current], awaited).filter((c) => c.index > 0 && c.index <= history.length);
  if (!cuts.length) return 0;
  const suffix: number[] = new Array(history.length + 1).fill(0);
  for (let i = history.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + history[i]!.tokens;
  const fits = (c: { index: number }) => suffix[c.index]! <= keep;
  return (cuts.find((c) => c.turnStart && fits(c)) ?? cuts.find(fits) ?? cuts.at(-1)!).index;
}

const TRIM_NOTE = (shown: number, total: number) =>
  `\n[... tool output trimmed for the model's context: ${shown} of ${total} characters shown; the whole output stays in the thread's history ...]\n`;
/** The notes `trimOutput` leaves, to tell them from what a tool said. */
export const TRIM_NOTES = /\n\[\.\.\. tool output trimmed for the model's context: \d+ of \d+ characters shown[^\]]*\]\n/g;

/** Keeps the head and the tail of a long tool output (the tags around it stay intact). */
export function trimOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 120);
  const head = Math.ceil((keep * 2) / 3);
  const tail = keep - head;
  return text.slice(0, head) + TRIM_NOTE(keep, text.length) + (tail ? text.slice(text.length - tail) : "");
}

/**
 * A call's arguments cut to about `maxChars`, still valid JSON (chat templates parse them):
 * long strings inside are cut, with a note.
 */
export function trimArguments(args: string, maxChars: number): string {
  if (args.length <= maxChars) return args;
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return trimOutput(args, maxChars);
  }
  for (let cap = Math.floor(maxChars / 2); cap >= 16; cap = Math.floor(cap / 2)) {
    const text = JSON.stringify(value, (_, v) => (typeof v === "string" && v.length > cap ? `${v.slice(0, cap)}… [${v.length - cap} more characters trimmed]` : v));
    if (text.length <= maxChars) return text;
  }
  return JSON.stringify({ note: `arguments of ${args.length} characters trimmed for the model's context` });
}

/** How much of an item may be trimmed: a tool output, or a call's arguments. */
const trimmable = (item: ConversationItem) =>
  item.type === "function_call_output" ? item.output.length : item.type === "function_call" ? item.arguments.length : 0;

function shrink(item: ConversationItem, maxChars: number): ConversationItem {
  if (item.type === "function_call_output") return { ...item, output: trimOutput(item.output, maxChars) };
  if (item.type === "function_call") return { ...item, arguments: trimArguments(item.arguments, maxChars) };
  return item;
}

/**
 * Trims tool outputs and call arguments, oldest first, to `maxTokens` each, until the items
 * take at most `room` tokens (or all are trimmed). Returns the new sizes; `size` measures
 * an item.
 */
export function trimOutputs(items: Sized[], room: number, maxTokens: number, size: (item: ConversationItem) => number): Sized[] {
  let total = items.reduce((n, s) => n + s.tokens, 0);
  const out = [...items];
  const maxChars = charsForTokens(maxTokens);
  for (let i = 0; i < out.length && total > room; i++) {
    const s = out[i]!;
    if (trimmable(s.item) <= maxChars) continue;
    const item = shrink(s.item, maxChars);
    const tokens = size(item);
    total += tokens - s.tokens;
    out[i] = { item, tokens };
  }
  return out;
}

/**
 * Trims tool outputs and call arguments, oldest first, each just enough (down to
 * `minTokens`), until the items take at most `room` tokens: the latest output, the one the
 * model is working on, keeps the most. Returns the new sizes.
 */
export function trimToFit(items: Sized[], room: number, minTokens: number, size: (item: ConversationItem) => number): Sized[] {
  const out = [...items];
  let excess = total(out) - room;
  for (let i = 0; i < out.length && excess > 0; i++) {
    const s = out[i]!;
    const chars = trimmable(s.item);
    if (!chars || s.tokens <= minTokens) continue;
    // the note trimming adds costs a few tokens: aim a little lower
    const target = Math.max(minTokens, s.tokens - excess - 48);
    const item = shrink(s.item, Math.floor((chars * target) / s.tokens));
    const tokens = size(item);
    excess -= s.tokens - tokens;
    out[i] = { item, tokens };
  }
  return out;
}

export const total = (items: Sized[]) => items.reduce((n, s) => n + s.tokens, 0);
