import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Principal } from "../auth/principal";
import { InvalidRequest } from "../errors";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import type { Services } from "../services";
import { forkLastTurn, switchBranch, unfork } from "../store/branches";
import { getGate } from "../store/conversations";
import { chatThread } from "./chat";
import { threadHistory } from "./chat-history";
import { Accepted, History, SwitchBranch, ThreadParams } from "./chat-wire";
import type { ChatEventHub } from "./events";
import { said } from "../agent/turn-types";

const EditBody = Type.Object({ content: Type.String({ minLength: 1, error: "is required and must be a non-empty string." }) }, { additionalProperties: true });
const SwitchBody = Type.Object(
  { item_id: SwitchBranch.properties.item_id, branch: Type.Integer({ minimum: 1, error: "must be a whole number from 1." }) },
  { additionalProperties: true },
);

const WAITING = "This conversation waits for a decision on a tool call: approve or deny it first.";

/**
 * Another answer to the last message (regenerate, retry), or an answer to the last message
 * edited. The turn they replace is kept as an alternative (the 1/2 arrows); only the
 * alternative shown is the thread the model reads.
 */
export function branchRoutes(s: Services, events: ChatEventHub) {
  /** Sets the last turn aside and answers its message again (or `content` instead); 202 as /api/chat/send. */
  const answerAgain = async (p: Principal, threadId: string, content?: string): Promise<Accepted> => {
    await chatThread(s, p, threadId);
    await takeTurnBudget(s, p);
    const forked = await s.agent.withThread(threadId, async () => {
      if (await getGate(s.db, threadId)) throw new InvalidRequest(WAITING);
      return forkLastTurn(s.db, threadId);
    });
    if (!forked) throw new InvalidRequest("There is no message of yours in this conversation to answer again.");
    let started;
    try {
      started = await s.agent.start({
        channel: "chat",
        userId: p.userId,
        threadId,
        input: said({ role: "user", ...forked.message, ...(content === undefined ? {} : { content }) }),
        model: "default",
        timeoutMs: s.backgroundTurnTimeoutMs,
        background: true,
        surfacesGates: true,
      });
    } catch (e) {
      // refused before anything was stored: the turn set aside comes back
      await s.agent.withThread(threadId, () => unfork(s.db, threadId, forked));
      throw e;
    }
    const { turn, result } = started;
    void result.catch((e) => s.log.error(`chat turn ${turn.id}: ${(e as Error).message}`));
    return { message_id: turn.id, response_id: turn.id, thread_id: turn.threadId, status: "accepted" };
  };

  return new Elysia({ name: "chat-branches" })
    .use(requireAuth(s))
    .post("/api/chat/threads/:thread_id/regenerate", async ({ principal, params, status }) => status(202, await answerAgain(principal, params.thread_id)), {
      parse: "none",
      params: ThreadParams,
      response: { 202: Accepted },
    })
    .post("/api/chat/threads/:thread_id/edit", async ({ principal, params, body, status }) => status(202, await answerAgain(principal, params.thread_id, body.content)), {
      parse: authedJson(s),
      params: ThreadParams,
      body: EditBody,
      response: { 202: Accepted },
    })
    .post(
      "/api/chat/threads/:thread_id/branches",
      async ({ principal, params, body }): Promise<History> => {
        const threadId = params.thread_id;
        const thread = await chatThread(s, principal, threadId);
        await s.agent.withThread(threadId, async () => {
          if (await getGate(s.db, threadId)) throw new InvalidRequest(WAITING);
          if (!(await switchBranch(s.db, threadId, body.item_id, body.branch))) {
            throw new InvalidRequest(`No alternative ${body.branch} where item ${body.item_id} starts.`);
          }
        });
        return threadHistory(s.db, thread, (id) => events.isRunning(id));
      },
      { parse: authedJson(s), params: ThreadParams, body: SwitchBody, response: History },
    );
}
