import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { answerText } from "../agent/turn-types";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import type { Services } from "../services";
import { promptFacts, type DecisionRecord } from "../store/chat-threads";
import { getGate, listApprovalGates, listThreads, type Gate } from "../store/conversations";
import { isoFromSeconds } from "../http/time";
import { ApprovalList, Decision, DecisionReply, ThreadParams } from "./chat-wire";
import type { ChatEventHub } from "./events";

export const DecisionBody = Type.Object(
  { decision: Type.Union(Decision.anyOf, { error: "is required and must be approve, deny or always." }) },
  { additionalProperties: true },
);

/**
 * Approval gates for the channels that show them to a person (web UI, TUI): the tool calls
 * waiting for this user's decision, and the decision, which runs the paused turn on.
 */
export function approvalRoutes(s: Services, events: ChatEventHub) {
  return new Elysia({ name: "approvals" })
    .use(requireAuth(s))
    .get("/api/chat/approvals", async ({ principal }) => {
      const gates = await listApprovalGates(s.db, principal.userId);
      const titles = new Map((await listThreads(s.db, principal.userId)).map((t) => [t.id, t.title]));
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
    }, { response: ApprovalList })
    .post(
      "/api/chat/approvals/:thread_id",
      async ({ params, body, principal }): Promise<DecisionReply> => {
        await takeTurnBudget(s, principal);
        const threadId = params.thread_id;
        // the decision is kept with the turn it resumes, so that the thread's record shows it
        const gate = await getGate(s.db, threadId);
        const meta = gate?.kind === "approval" ? { approval: { ...decisionRecord(gate, body.decision, principal.userId), ...(await promptFacts(s.db, threadId)) } } : undefined;
        // someone else's thread reads as no thread at all (ThreadNotFound: 404)
        const { turn, result } = await s.agent.start({
          channel: "chat",
          userId: principal.userId,
          threadId,
          input: { kind: "approval", decision: body.decision },
          meta,
          model: "default",
          timeoutMs: s.turnTimeoutMs,
          surfacesGates: true,
        });
        // every client showing the prompt learns the decision, whichever one took it
        if (gate?.kind === "approval") {
          events.announce(principal.userId, { type: "approval.decided", thread_id: turn.threadId, response_id: turn.id, call_id: gate.callId, decision: body.decision });
        }
        const r = await result;
        const next = r.status === "completed" ? await getGate(s.db, r.threadId) : undefined;
        return {
          thread_id: r.threadId,
          response_id: r.id,
          status: r.status,
          output_text: answerText(r),
          error: r.error,
          // the continued turn may stop at the next call that needs approval
          pending_approval:
            next?.kind === "approval"
              ? { call_id: next.callId, tool: next.details.tool, arguments: next.details.arguments }
              : null,
        };
      },
      { parse: authedJson(s), params: ThreadParams, body: DecisionBody, response: DecisionReply },
    );
}

/** What the thread's record keeps of a decision: the call as the prompt showed it, and the answer. */
function decisionRecord(gate: Extract<Gate, { kind: "approval" }>, decision: Decision, userId: string): DecisionRecord {
  return { call_id: gate.callId, tool: gate.details.tool, arguments: gate.details.arguments, decision, decided_by: userId };
}
