import type { Agent } from "../agent/turns";
import { answerText } from "../agent/turn-types";
import { promptFacts, type DecisionRecord } from "../store/chat-threads";
import { getGate, listApprovalGates, listThreads, type Gate } from "../store/conversations";
import type { Db } from "../store/db";
import { isoFromSeconds } from "../http/time";
import type { ApprovalList, Decision, DecisionReply } from "./chat-wire";
import type { ChatEventHub } from "./events";

export interface ApprovalsDeps {
  db: Db;
  agent: Agent;
  events: ChatEventHub;
  /** How long the turn a decision resumes may run. */
  turnTimeoutMs: number;
}

/**
 * Approval gates as a person answers them (web UI, TUI, `service approvals`): the tool calls
 * waiting for a user's decision, and the decision, which runs the paused turn on. Another
 * user's thread reads as no thread (the agent's ThreadNotFound).
 */
export class Approvals {
  constructor(private readonly deps: ApprovalsDeps) {}

  /** The calls waiting for this user's decision, newest first, with their threads' titles. */
  async pending(userId: string): Promise<ApprovalList> {
    const { db } = this.deps;
    const gates = await listApprovalGates(db, userId);
    const titles = new Map((await listThreads(db, userId)).map((t) => [t.id, t.title]));
    return {
      approvals: gates.map((g) => ({
        thread_id: g.threadId,
        thread_title: titles.get(g.threadId) ?? null,
        call_id: g.callId,
        tool: g.tool,
        arguments: g.arguments,
        ...(g.destination ? { destination: g.destination } : {}),
        ...(g.diff ? { diff: g.diff } : {}),
        created_at: isoFromSeconds(g.createdAt),
      })),
    };
  }

  /** The user's decision on the thread's waiting call: the turn goes on, and its outcome is the answer. */
  async decide(userId: string, threadId: string, decision: Decision): Promise<DecisionReply> {
    const { db, agent, events } = this.deps;
    // the decision is kept with the turn it resumes, so that the thread's record shows it
    const gate = await getGate(db, threadId);
    const meta = gate?.kind === "approval" ? { approval: { ...decisionRecord(gate, decision, userId), ...(await promptFacts(db, threadId)) } } : undefined;
    const { turn, result } = await agent.start({
      channel: "chat",
      userId,
      threadId,
      input: { kind: "approval", decision },
      meta,
      model: "default",
      timeoutMs: this.deps.turnTimeoutMs,
      surfacesGates: true,
    });
    // every client showing the prompt learns the decision, whichever one took it
    if (gate?.kind === "approval") {
      events.announce(userId, { type: "approval.decided", thread_id: turn.threadId, response_id: turn.id, call_id: gate.callId, decision });
    }
    const r = await result;
    const next = r.status === "completed" ? await getGate(db, r.threadId) : undefined;
    return {
      thread_id: r.threadId,
      response_id: r.id,
      status: r.status,
      output_text: answerText(r),
      error: r.error,
      // the continued turn may stop at the next call that needs approval
      pending_approval: next?.kind === "approval" ? { call_id: next.callId, tool: next.details.tool, arguments: next.details.arguments } : null,
    };
  }
}

/** What the thread's record keeps of a decision: the call as the prompt showed it, and the answer. */
function decisionRecord(gate: Extract<Gate, { kind: "approval" }>, decision: Decision, userId: string): DecisionRecord {
  return { call_id: gate.callId, tool: gate.details.tool, arguments: gate.details.arguments, decision, decided_by: userId };
}
