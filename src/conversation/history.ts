import type { ChatMessage, ContentPart } from "../llm/types";
import type { ConversationItem, ImageRef } from "./items";

const NO_RESULT = "(no result: the tool call did not finish)";

const imageParts = (images: ImageRef[]): ContentPart[] =>
  images.map((i) => ({ type: "image_url", image_url: { url: i.url, ...(i.detail ? { detail: i.detail } : {}) } }));

/**
 * Turns stored items into chat messages. Function calls join the assistant message before
 * them; a call left without an output (a turn that died) gets a placeholder result, because
 * providers reject a tool call that has no answer. Tool messages carry text only, so images a
 * tool returned follow its step's tool messages as a user message.
 */
export function toChatMessages(items: ConversationItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const open = new Set<string>();
  let toolImages: ContentPart[] = [];
  const closeStep = () => {
    for (const id of open) out.push({ role: "tool", tool_call_id: id, content: NO_RESULT });
    open.clear();
    if (toolImages.length) out.push({ role: "user", content: toolImages });
    toolImages = [];
  };
  for (const item of items) {
    if (item.type === "function_call_output") {
      if (!open.delete(item.call_id)) continue; // an output for a call the model never saw
      out.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
      if (item.images?.length) toolImages.push({ type: "text", text: `Images returned by call ${item.call_id}:` }, ...imageParts(item.images));
      continue;
    }
    if (item.type === "function_call") {
      const last = out.at(-1);
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } };
      // An assistant message last in line is this step's: its open calls are this call's siblings.
      if (last?.role === "assistant") (last.tool_calls ??= []).push(call);
      else {
        closeStep();
        out.push({ role: "assistant", content: null, tool_calls: [call] });
      }
      open.add(item.call_id);
      continue;
    }
    closeStep();
    if (item.role === "user" && item.images?.length) {
      out.push({ role: "user", content: [...(item.content ? [{ type: "text" as const, text: item.content }] : []), ...imageParts(item.images)] });
    } else {
      out.push({ role: item.role, content: item.content });
    }
  }
  closeStep();
  return out;
}
