import { isIdentityPath } from "../memory/identity";
import { toChatMessages } from "../conversation/history";
import type { ConversationItem } from "../conversation/items";
import type { ApprovalPolicy } from "../config/schema";
import type { ChatMessage, Llm, ToolSpec } from "../llm/types";
import type { Logger } from "../log";
import type { ContextBudget } from "./budget";
import { rawItemTokens, rawMessageTokens, rawToolTokens, type Calibration } from "./estimate";
import { safeCuts, trimOutputs, type Sized } from "./plan";

export const FLUSH_PROMPT = `[Silent step: the user does not see this message or your reply.] The older turns of this conversation, above, are about to be replaced by a short summary, and their details will leave your context. Before that, save to the user's workspace memory with memory_write whatever in them should last beyond this conversation: facts about the user and their world, preferences, decisions and commitments, unfinished work, and the identifiers (names, ids, paths, URLs, numbers) that will be needed again. Leave out small talk and what is already in your instructions or memory. Prefer one note, such as notes/<topic>.md; what you write to an existing document is added to its end. If nothing is worth keeping, answer only: nothing to save.`;

/** Where the silent step's notes go: a document's content, and writing one (validated there). */
export interface NoteStore {
  read(userId: string, path: string): Promise<{ content: string } | undefined>;
  write(userId: string, path: string, content: string, opts: { tainted?: boolean }): Promise<unknown>;
}

export interface FlushDeps {
  llm: Llm;
  budget: ContextBudget;
  calibration: Calibration;
  /** memory_write as the model knows it; no flush without it. */
  tool: ToolSpec | undefined;
  policy: (tool: string) => ApprovalPolicy;
  notes: NoteStore | undefined;
  redact: (text: string) => string;
}

export interface FlushResult {
  notes: number;
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * One silent agent step before older turns are summarised: the model sees them (as much of
 * their latest part as fits) with memory_write as its only tool, and what it writes is kept.
 * Nothing of the step enters the thread. It is skipped when memory_write is not offered or
 * needs approval (nobody could give it), and it never fails the turn: a failure costs only
 * the notes.
 */
export async function memoryFlush(
  deps: FlushDeps,
  view: { system: string; items: ConversationItem[] },
  /** `tainted`: what is summarised held untrusted content, so the notes made of it are untrusted too. */
  ctx: { userId: string; signal: AbortSignal; tainted?: boolean },
  log: Pick<Logger, "warn">,
): Promise<FlushResult> {
  const usage = { inputTokens: 0, outputTokens: 0 };
  if (!deps.tool || !deps.notes || deps.policy(deps.tool.name) !== "auto") return { notes: 0, usage };
  const cal = deps.calibration;
  const system: ChatMessage = { role: "system", content: view.system };
  const ask: ChatMessage = { role: "user", content: FLUSH_PROMPT };
  const fixed = cal.scale(rawMessageTokens(system) + rawMessageTokens(ask) + rawToolTokens([deps.tool]));
  const room = deps.budget.prompt - fixed;
  if (room <= 0) return { notes: 0, usage };
  const items = latestThatFit(view.items, room, (it) => cal.scale(rawItemTokens(it)));
  if (!items.length) return { notes: 0, usage };
  const messages = [system, ...toChatMessages(items), ask].map((m) => redactMessage(m, deps.redact));
  const raw = messages.reduce((n, m) => n + rawMessageTokens(m), rawToolTokens([deps.tool]));
  const calls: { name: string; arguments: string }[] = [];
  try {
    for await (const ev of deps.llm.stream({ messages, tools: [deps.tool], signal: ctx.signal, maxTokens: deps.budget.reserve })) {
      if (ev.type === "tool_calls") calls.push(...ev.calls);
      else if (ev.type === "usage") {
        usage.inputTokens += ev.inputTokens;
        usage.outputTokens += ev.outputTokens;
        cal.observe(raw, ev.inputTokens);
      }
    }
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? e;
    log.warn("memory flush: the model failed", { user_id: ctx.userId, error: (e as Error).message });
    return { notes: 0, usage };
  }
  let notes = 0;
  for (const call of calls) {
    if (call.name !== deps.tool.name) continue;
    try {
      const args = JSON.parse(call.arguments) as { path?: unknown; content?: unknown };
      if (typeof args.path !== "string" || typeof args.content !== "string" || !args.content.trim()) continue;
      // identity files change only with the user's approval, never in a silent step
      if (isIdentityPath(args.path)) continue;
      const before = await deps.notes.read(ctx.userId, args.path);
      const content = before?.content.trim() ? `${before.content.trimEnd()}\n\n${args.content}` : args.content;
      await deps.notes.write(ctx.userId, args.path, content, { tainted: ctx.tainted === true });
      notes++;
    } catch (e) {
      log.warn("memory flush: a note was not written", { user_id: ctx.userId, error: (e as Error).message });
    }
  }
  return { notes, usage };
}

/** The latest items that fit in `room` tokens (old tool outputs trimmed first), cut where no tool pair splits. */
function latestThatFit(items: ConversationItem[], room: number, size: (it: ConversationItem) => number): ConversationItem[] {
  const sized: Sized[] = trimOutputs(
    items.map((item) => ({ item, tokens: size(item) })),
    room,
    Math.max(128, Math.floor(room / 16)),
    size,
  );
  const suffix: number[] = new Array(sized.length + 1).fill(0);
  for (let i = sized.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + sized[i]!.tokens;
  const cut = safeCuts(items).find((c) => suffix[c.index]! <= room)?.index ?? items.length;
  return sized.slice(cut).map((s) => s.item);
}

export function redactMessage(m: ChatMessage, redact: (text: string) => string): ChatMessage {
  if (m.role === "assistant") {
    return {
      ...m,
      content: m.content === null ? null : redact(m.content),
      ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: redact(c.function.arguments) } })) } : {}),
    };
  }
  if (m.role === "user" && typeof m.content !== "string") {
    return { ...m, content: m.content.map((p) => (p.type === "text" ? { ...p, text: redact(p.text) } : p)) };
  }
  return { ...m, content: redact(m.content as string) };
}
