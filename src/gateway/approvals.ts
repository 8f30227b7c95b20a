import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import type { Services } from "../services";
import { Approvals } from "./approval-service";
import { ApprovalList, Decision, DecisionReply, ThreadParams } from "./chat-wire";
import type { ChatEventHub } from "./events";

export const DecisionBody = Type.Object(
  { decision: Type.Union(Decision.anyOf, { error: "is required and must be approve, deny or always." }) },
  { additionalProperties: true },
);

/** The approval routes of the channels that show gates to a person (web UI, TUI): see `Approvals`. */
export function approvalRoutes(s: Services, events: ChatEventHub) {
  const approvals = new Approvals({ db: s.db, agent: s.agent, events, turnTimeoutMs: s.turnTimeoutMs });
  return new Elysia({ name: "approvals" })
    .use(requireAuth(s))
    .get("/api/chat/approvals", ({ principal }) => approvals.pending(principal.userId), { response: ApprovalList })
    .post(
      "/api/chat/approvals/:thread_id",
      async ({ params, body, principal }) => {
        await takeTurnBudget(s, principal);
        return approvals.decide(principal.userId, params.thread_id, body.decision);
      },
      { parse: authedJson(s), params: ThreadParams, body: DecisionBody, response: DecisionReply },
    );
}
