import { ThreadNotFound } from "../errors";
import { itemId } from "../conversation/ids";
import type { ConversationItem, FunctionCallOutputItem, PendingCall } from "../conversation/items";
import { deleteItem, getGate, getResponse, loadResponseItems } from "../store/conversations";
import type { Db } from "../store/db";
import type { ToolRegistry } from "../tools/registry";
import type { TurnHandle, TurnResult } from "./turn-types";

/** What the model is told of a call the service stopped in the middle of. */
export const INTERRUPTED =
  "Error: this call was interrupted when the service stopped, before its result was stored. It may or may not have taken effect: check before you try it again.";

/**
 * Where a stored turn that was cut short (a crash, a stop, a failure) goes on from. Its tool
 * calls are stored as they run and their results the moment they complete (the durable
 * turn's checkpoints), so a call with no stored result was running when it stopped: one safe
 * to repeat (`Tool.repeatable`: the read-only built-ins) runs again, any other is answered
 * as interrupted. Finished calls are never run again: the model has their stored results.
 */
export function resumeCalls(stored: ConversationItem[], tools: ToolRegistry): { pending: PendingCall[]; interrupted: FunctionCallOutputItem[] } {
  const answered = new Set(stored.flatMap((i) => (i.type === "function_call_output" ? [i.call_id] : [])));
  const pending: PendingCall[] = [];
  const interrupted: FunctionCallOutputItem[] = [];
  for (const item of stored) {
    if (item.type !== "function_call" || item.external || answered.has(item.call_id)) continue;
    // the call is in the thread already: it runs again without being added twice
    const call = { call_id: item.call_id, name: item.name, arguments: item.arguments, stored: item.id };
    if (tools.get(item.name)?.repeatable) pending.push(call);
    else interrupted.push({ type: "function_call_output", id: itemId(), call_id: item.call_id, output: INTERRUPTED });
  }
  return { pending, interrupted };
}

/** A stored turn that a crash, a stop or a failure cut short, and where it goes on from. */
export interface Recovering {
  /** What it produced before it stopped, as stored. */
  output: ConversationItem[];
  pending: PendingCall[];
  /** Results of calls that were running when it stopped (not safe to repeat). */
  interrupted: FunctionCallOutputItem[];
}

/**
 * The stored response a recovery names, which must be this user's and on this thread
 * (ThreadNotFound otherwise): its result, if it had completed after all; else undefined.
 */
export async function finishedTurn(db: Db, userId: string, id: string, threadId: string): Promise<{ result: TurnResult; turn: TurnHandle } | undefined> {
  const row = await getResponse(db, id);
  if (!row || row.userId !== userId || row.threadId !== threadId) throw new ThreadNotFound(threadId);
  if (row.status !== "completed") return undefined;
  const { input, output } = await loadResponseItems(db, id);
  const gate = await getGate(db, threadId);
  const waiting = gate?.responseId === id && gate.kind !== "external_tool" ? gate.kind : undefined;
  const usage = { inputTokens: row.inputTokens, outputTokens: row.outputTokens, cachedTokens: row.cachedTokens, reasoningTokens: row.reasoningTokens, costUsd: row.costMicroUsd / 1e6 };
  const result: TurnResult = { id, threadId, createdAt: row.createdAt, model: row.model, status: "completed", error: null, items: [...input, ...output], output, usage, tools: [], ...(waiting ? { waiting } : {}) };
  return { result, turn: { id, threadId, createdAt: row.createdAt, input } };
}

/**
 * Where a stopped turn goes on from: what it produced, and the call it was running. An
 * answer the stop cut off mid-sentence is taken out of the thread: it is asked for again.
 */
export async function recoveringTurn(db: Db, tools: ToolRegistry, id: string, threadId: string): Promise<Recovering> {
  const { output } = await loadResponseItems(db, id);
  const last = output.at(-1);
  if (last?.type === "message" && last.role === "assistant" && last.status === "incomplete") {
    await deleteItem(db, threadId, last.id);
    output.pop();
  }
  return { output, ...resumeCalls(output, tools) };
}
