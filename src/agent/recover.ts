import { itemId } from "../conversation/ids";
import type { ConversationItem, FunctionCallOutputItem, PendingCall } from "../conversation/items";
import type { ToolRegistry } from "../tools/registry";

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
