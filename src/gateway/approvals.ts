import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { isUuid } from "../conversation/ids";
import { answerText } from "../agent/turn-types";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import type { Services } from "../services";
import { NotFound } from "../errors";
import { getGate, listApprovalGates } from "../store/conversations";
import { isoFromSeconds } from "../http/time";
import { Decision } from "./chat-wire";

export const DecisionBody = Type.Object(
  { decision: Type.Union(Decision.anyOf, { error: "is required and must be approve, deny or always." }) },
  { additionalProperties: true },
);

/**
 * Approval gates for the channels that show them to a person (web UI, TUI): the tool calls
 * waiting for this user's decision, and the decision, which runs the paused turn on.
 */
export function approvalRoutes(s: Services) {
  return new Elysia({ name: "approvals" })
    .use(requireAuth(s))
    .get("/api/chat/approvals", async ({ principal }) => ({
      approvals: (await listApprovalGates(s.db, principal.userId)).map((g) => ({
        thread_id: g.threadId,
        call_id: g.callId,
        tool: g.tool,
        arguments: g.arguments,
        created_at: isoFromSeconds(g.createdAt),
      })),
    }))
    .post(
      "/api/chat/approvals/:thread_id",
      async ({ params, body, principal }) => {
        takeTurnBudget(s, principal);
        const threadId = params.thread_id;
        if (!isUuid(threadId)) throw new NotFound(`No thread found with id ${threadId}.`);
        // someone else's thread reads as no thread at all (ThreadNotFound: 404)
        const r = await s.agent.run({
          channel: "chat",
          userId: principal.userId,
          threadId,
          messages: [],
          toolOutputs: [],
          approval: body.decision,
          model: "default",
          timeoutMs: s.turnTimeoutMs,
          surfacesGates: true,
        });
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
      { parse: authedJson(s), body: DecisionBody },
    );
}
