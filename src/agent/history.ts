import type { ChatMessage } from "../llm/types";
import type { ConversationItem } from "./items";

const NO_RESULT = "(no result: the tool call did not finish)";

/**
 * Turns stored items into chat messages. Function calls join the assistant message before
 * them; a call left without an output (a turn that died) gets a placeholder result, because
 * providers reject a tool call that has no answer.
 */
export function toChatMessages(items: ConversationItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const open = new Set<string>();
  const closeOpenCalls = () => {
    for (const id of open) out.push({ role: "tool", tool_call_id: id, content: NO_RESULT });
    open.clear();
  };
  for (const item of items) {
    if (item.type === "function_call_output") {
      if (!open.delete(item.call_id)) continue; // an output for a call the model never saw
      out.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
      continue;
    }
    if (item.type === "function_call") {
      const last = out.at(-1);
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } };
      // An assistant message last in line is this step's: its open calls are this call's siblings.
      if (last?.role === "assistant") (last.tool_calls ??= []).push(call);
      else {
        closeOpenCalls();
        out.push({ role: "assistant", content: null, tool_calls: [call] });
      }
      open.add(item.call_id);
      continue;
    }
    closeOpenCalls();
    out.push({ role: item.role, content: item.content });
  }
  closeOpenCalls();
  return out;
}
