import type { ApprovalPolicy } from "../config/schema";
import { TurnError } from "../errors";
import type { AgentEvent } from "./events";
import type { ThreadContext } from "../context/thread-context";
import type { Llm, LlmOptions } from "../llm/types";
import type { Safety } from "../safety/safety";
import type { ToolRegistry } from "../tools/registry";
import type { ToolContext } from "../tools/tool";
import { callId, itemId } from "../conversation/ids";
import type { ConversationItem, ExternalTool, FunctionCallItem, FunctionCallOutputItem, MessageItem, PendingCall } from "../conversation/items";
import { ToolOffer } from "./offer";
import type { Review, TurnTrust } from "./trust";

export interface LoopInput {
  llm: Llm;
  tools: ToolRegistry;
  external: ExternalTool[];
  /** The thread before this turn: it builds each step's messages within the context budget. */
  context: Pick<ThreadContext, "step" | "observe" | "overflowed" | "budget">;
  /** Calls of a paused assistant step still to be handled before the model runs again. */
  pending: PendingCall[];
  maxSteps: number;
  ctx: ToolContext;
  /** When the turn times out (ms since the epoch), if it does: no LLM retry waits past it. */
  deadline?: number;
  /** The caller's sampling and output format, sent with every model step. */
  llmOptions?: LlmOptions;
  /** Items this turn produces are appended here as they finish, so a failure keeps them. */
  produced: ConversationItem[];
  safety: Safety;
  /** The approval policy of a tool for this user: a denied one is neither offered nor run. */
  policy: (toolName: string) => ApprovalPolicy;
  /** A call the user decided on (resuming an approval gate). */
  decision?: { callId: string; approve: boolean };
  /** Whether a tool may run for this user now, or which extension must be connected first (OAuth). */
  authorize?: (toolName: string) => Promise<{ extension: string; url: string } | undefined>;
  /** What the turn has read, and what it may let out of the box without asking. */
  trust: TurnTrust;
  /**
   * Stores what the turn has produced so far (a durable turn: a job, a background turn):
   * called before a tool runs and as soon as it completes.
   */
  checkpoint?: () => Promise<void>;
  /** A call that could carry data out of the box ran: where to, and why it was let through. */
  egressed?: (call: PendingCall, destination: string, approvedBy: string) => void;
}

/** How the loop stopped: finished, or paused on a caller tool with calls still pending. */
export type LoopOutcome =
  | { kind: "done" }
  | { kind: "paused"; call: FunctionCallItem; pending: PendingCall[] }
  /** Waiting for approval of `call`; `pending` starts with it. `review`: what the person is shown besides the call. */
  | { kind: "approval"; call: PendingCall; pending: PendingCall[]; review?: Review }
  /** Waiting for the user to connect `extension` before `call` runs; `pending` starts with it. */
  | { kind: "oauth"; call: PendingCall; pending: PendingCall[]; extension: string; url: string };

export async function* agentLoop(input: LoopInput): AsyncGenerator<AgentEvent, LoopOutcome> {
  const { llm, tools, external, ctx, produced, safety } = input;
  const externalNames = new Set(external.map((t) => t.name));
  // what each step offers: tools the policy denies never, all of them or on demand (tool_search)
  const offer = new ToolOffer({ registry: tools, external, policy: input.policy, budget: input.context.budget });
  let pending = input.pending;

  for (let step = 0; ; step++) {
    while (pending.length) {
      ctx.signal.throwIfAborted();
      const [call, ...rest] = pending as [PendingCall, ...PendingCall[]];
      const isExternal = externalNames.has(call.name);
      const decided = input.decision?.callId === call.call_id ? input.decision : undefined;
      const policy = isExternal || decided ? "auto" : input.policy(call.name);
      // connecting comes before approving: an approval is not asked for a call that cannot run yet
      const runs = !isExternal && policy !== "deny" && decided?.approve !== false;
      const toolCtx = { ...ctx, tools: offer, tainted: input.trust.tainted };
      // where its data could go from a tainted turn, or the identity file it changes: the user sees it first
      const checked = runs ? await input.trust.review(tools, call, toolCtx) : {};
      const auth = runs && input.authorize ? await input.authorize(call.name) : undefined;
      if (auth) {
        yield { type: "auth.required", call, ...auth };
        return { kind: "oauth", call, pending, ...auth };
      }
      if (policy === "ask" || (checked.review && !decided)) {
        const { destination, diff } = checked.review ?? {};
        yield { type: "approval.required", call, ...(destination ? { destination } : {}), ...(diff ? { diff } : {}) };
        return { kind: "approval", call, pending, ...(checked.review ? { review: checked.review } : {}) };
      }
      pending = rest;
      const { stored, ...asked } = call;
      const item: FunctionCallItem = { type: "function_call", id: stored ?? itemId(), ...asked, external: isExternal };
      if (!stored) produced.push(item);
      if (isExternal) {
        yield { type: "function_call", item };
        return { kind: "paused", call: item, pending };
      }
      // a durable turn stores the call before it runs: if the service stops in between, the call is known to have been running
      await input.checkpoint?.();
      yield { type: "tool.started", item };
      const result =
        decided?.approve === false
          ? { output: `Error: the user denied this call of ${call.name}.`, isError: true, untrusted: false }
          : policy === "deny"
            ? { output: `Error: ${call.name} is disabled by the operator's policy.`, isError: true, untrusted: false }
            : await tools.run(call.name, call.arguments, toolCtx);
      const ran = runs && decided?.approve !== false;
      if (ran && checked.destination !== undefined) input.egressed?.(call, checked.destination, decided ? "user" : (checked.cleared ?? "user"));
      if (result.untrusted) input.trust.taint();
      const text = safety.toolOutput(call.name, safety.redact(result.output));
      const output: FunctionCallOutputItem = { type: "function_call_output", id: itemId(), call_id: call.call_id, output: text, ...(result.untrusted ? { untrusted: true } : {}) };
      produced.push(output);
      // ... and its result the moment it completes: a turn that goes on after a stop never runs it again
      await input.checkpoint?.();
      if (ran && !result.isError && checked.confirmation) yield { type: "identity.changed", path: checked.confirmation.identityFile };
      yield { type: "tool.completed", item: output, isError: result.isError };
    }

    ctx.signal.throwIfAborted();
    if (step >= input.maxSteps) {
      throw new TurnError("max_steps", `The agent stopped after ${input.maxSteps} model steps without an answer.`);
    }
    const toolSpecs = offer.specs(produced);
    const prepared = await input.context.step(produced, toolSpecs, ctx.signal);
    if (prepared.compacted) yield { type: "context.compacted", item: prepared.compacted };
    if (prepared.usage.inputTokens || prepared.usage.outputTokens) yield { type: "usage", ...prepared.usage };
    const messages = prepared.messages;
    let message: MessageItem | undefined;
    let thinking: { id: string; redactor: ReturnType<Safety["streamRedactor"]> } | undefined;
    let truncated = false;
    const redactor = safety.streamRedactor();
    try {
      for await (const ev of llm.stream({ messages, tools: toolSpecs, signal: ctx.signal, deadline: input.deadline, options: input.llmOptions })) {
        if (ev.type === "text") {
          if (!message) {
            message = { type: "message", id: itemId(), role: "assistant", content: "" };
            yield { type: "message.started", itemId: message.id };
          }
          const delta = redactor.push(ev.delta);
          if (!delta) continue;
          message.content += delta;
          yield { type: "text.delta", itemId: message.id, delta };
        } else if (ev.type === "reasoning") {
          // shown live to a person at most: never stored, never sent back to the model
          thinking ??= { id: itemId(), redactor: safety.streamRedactor() };
          const delta = thinking.redactor.push(ev.delta);
          if (delta) yield { type: "reasoning.delta", itemId: thinking.id, delta };
        } else if (ev.type === "usage") {
          input.context.observe(ev.inputTokens);
          yield ev;
        } else if (ev.type === "truncated") {
          truncated = true;
        } else {
          pending = ev.calls.map((c) => ({ ...c, call_id: callId() }));
        }
      }
      yield* endThinking(thinking);
      // whatever the model client did, a turn cut short never passes for a finished one
      ctx.signal.throwIfAborted();
    } catch (e) {
      yield* endThinking(thinking);
      // the provider found the request too long: once, fit it harder and ask again
      if (!message && input.context.overflowed(e)) {
        step--;
        continue;
      }
      // what was streamed before the cut stays, marked incomplete
      if (message) yield* finishMessage(message, redactor, produced, "incomplete");
      throw e;
    }
    if (truncated) {
      // cut at the provider's token limit: calls it was still writing are not run, and the
      // answer says it is cut (the response's incomplete_details)
      pending = [];
      if (!message) {
        message = { type: "message", id: itemId(), role: "assistant", content: "" };
        yield { type: "message.started", itemId: message.id };
      }
      yield* finishMessage(message, redactor, produced, "incomplete");
      return { kind: "done" };
    }
    if (message) yield* finishMessage(message, redactor, produced);
    if (!pending.length) return { kind: "done" };
  }
}

function* finishMessage(
  message: MessageItem,
  redactor: ReturnType<Safety["streamRedactor"]>,
  produced: ConversationItem[],
  status?: "incomplete",
): Generator<AgentEvent> {
  const tail = redactor.flush();
  if (tail) {
    message.content += tail;
    yield { type: "text.delta", itemId: message.id, delta: tail };
  }
  if (status) message.status = status;
  produced.push(message);
  yield { type: "message.completed", item: message };
}

/** The rest of a step's reasoning that the redactor held back, if any. */
function* endThinking(thinking: { id: string; redactor: ReturnType<Safety["streamRedactor"]> } | undefined): Generator<AgentEvent> {
  const tail = thinking?.redactor.flush();
  if (tail) yield { type: "reasoning.delta", itemId: thinking!.id, delta: tail };
}
