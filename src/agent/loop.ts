import { TurnError } from "../errors";
import type { Llm } from "../llm/types";
import type { ToolRegistry } from "../tools/registry";
import type { ExternalTool, ToolContext } from "../tools/tool";
import { toChatMessages } from "./history";
import { callId, itemId } from "./ids";
import type { ConversationItem, FunctionCallItem, FunctionCallOutputItem, MessageItem, PendingCall } from "./items";

/** What the loop reports as it runs; every channel renders these same events. */
export type AgentEvent =
  | { type: "message.started"; itemId: string }
  | { type: "text.delta"; itemId: string; delta: string }
  | { type: "message.completed"; item: MessageItem }
  | { type: "tool.started"; item: FunctionCallItem }
  | { type: "tool.completed"; item: FunctionCallOutputItem; isError: boolean }
  /** A caller-supplied tool was called: the turn pauses after this event. */
  | { type: "function_call"; item: FunctionCallItem }
  | { type: "usage"; inputTokens: number; outputTokens: number };

export interface LoopInput {
  llm: Llm;
  tools: ToolRegistry;
  external: ExternalTool[];
  system: string;
  /** The thread so far, including this turn's input items. */
  history: ConversationItem[];
  /** Calls of a paused assistant step still to be handled before the model runs again. */
  pending: PendingCall[];
  maxSteps: number;
  ctx: ToolContext;
  /** Items this turn produces are appended here as they finish, so a failure keeps them. */
  produced: ConversationItem[];
}

/** How the loop stopped: finished, or paused on a caller tool with calls still pending. */
export type LoopOutcome = { kind: "done" } | { kind: "paused"; call: FunctionCallItem; pending: PendingCall[] };

export async function* agentLoop(input: LoopInput): AsyncGenerator<AgentEvent, LoopOutcome> {
  const { llm, tools, external, ctx, produced } = input;
  const externalNames = new Set(external.map((t) => t.name));
  const toolSpecs = [...tools.specs(), ...external];
  let pending = input.pending;

  for (let step = 0; ; step++) {
    while (pending.length) {
      const [call, ...rest] = pending as [PendingCall, ...PendingCall[]];
      pending = rest;
      const isExternal = externalNames.has(call.name);
      const item: FunctionCallItem = { type: "function_call", id: itemId(), ...call, external: isExternal };
      produced.push(item);
      if (isExternal) {
        yield { type: "function_call", item };
        return { kind: "paused", call: item, pending };
      }
      yield { type: "tool.started", item };
      const result = await tools.run(call.name, call.arguments, ctx);
      const output: FunctionCallOutputItem = { type: "function_call_output", id: itemId(), call_id: call.call_id, output: result.output };
      produced.push(output);
      yield { type: "tool.completed", item: output, isError: result.isError };
    }

    if (step >= input.maxSteps) {
      throw new TurnError("max_steps", `The agent stopped after ${input.maxSteps} model steps without an answer.`);
    }
    const messages = [{ role: "system" as const, content: input.system }, ...toChatMessages([...input.history, ...produced])];
    let message: MessageItem | undefined;
    for await (const ev of llm.stream({ messages, tools: toolSpecs, signal: ctx.signal })) {
      if (ev.type === "text") {
        if (!message) {
          message = { type: "message", id: itemId(), role: "assistant", content: "" };
          yield { type: "message.started", itemId: message.id };
        }
        message.content += ev.delta;
        yield { type: "text.delta", itemId: message.id, delta: ev.delta };
      } else if (ev.type === "usage") {
        yield ev;
      } else {
        pending = ev.calls.map((c) => ({ ...c, call_id: callId() }));
      }
    }
    if (message) {
      produced.push(message);
      yield { type: "message.completed", item: message };
    }
    if (!pending.length) return { kind: "done" };
  }
}
