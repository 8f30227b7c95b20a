import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { isUuid } from "../agent/ids";
import { answerText } from "../agent/turns";
import { requireAuth, takeTurnBudget } from "../api/auth";
import { readJsonObject } from "../api/body";
import type { Services } from "../api/services";
import { InvalidRequest, NotFound } from "../errors";
import { getGate, listApprovalGates } from "../store/conversations";
import { iso } from "./chat";
import { Decision } from "./chat-wire";

export const DecisionBody = Type.Object({ decision: Decision });

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
        created_at: iso(g.createdAt),
      })),
    }))
    .post(
      "/api/chat/approvals/:thread_id",
      async ({ params, request, principal }) => {
        takeTurnBudget(s, principal);
        const body = await readJsonObject(request);
        if (!Value.Check(DecisionBody, body)) throw new InvalidRequest("`decision` is required and must be approve, deny or always.");
        const threadId = params.thread_id;
        if (!isUuid(threadId)) throw new NotFound(`No thread found with id ${threadId}.`);
        const turn = await s.agent.begin({
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
        // someone else's thread reads as no thread at all
        if (turn.notFound) throw new NotFound(`No thread found with id ${threadId}.`);
        const r = await s.events.runPublished(principal.userId, turn);
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
              ? { call_id: next.callId, tool: String(next.details?.tool ?? ""), arguments: String(next.details?.arguments ?? "") }
              : null,
        };
      },
      { parse: "none" },
    );
}
