import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { isUuid } from "../conversation/ids";
import { answerText } from "../agent/turn-types";
import type { Principal } from "../auth/principal";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import { sseResponse } from "../http/sse";
import { isoFromSeconds } from "../http/time";
import type { Services } from "../services";
import { InvalidRequest, NotFound, TurnError, UpstreamFailure } from "../errors";
import { renameThread, searchThreads } from "../store/chat-threads";
import { getThread, listThreads, type ThreadListing, type ThreadRow } from "../store/conversations";
import { threadHistory } from "./chat-history";
import type { Compacted, History, ThreadSummary } from "./chat-wire";
import { compactionMark, type ChatEventHub } from "./events";

const text = { minLength: 1, error: "is required and must be a non-empty string." };
const threadField = Type.Optional(Type.String({ error: "must be a thread UUID." }));
const ChatBody = Type.Object({ message: Type.String(text), thread_id: threadField }, { additionalProperties: true });
const SendBody = Type.Object({ content: Type.String(text), thread_id: threadField }, { additionalProperties: true });
const RenameBody = Type.Object({ title: Type.String({ error: "is required and must be a string." }) }, { additionalProperties: true });

/** The local chat endpoints the web UI and the terminal UI are built on. */
export function chatRoutes(s: Services, events: ChatEventHub) {
  /** A turn of the chat; `background` when its caller is answered before it ends (202), so that it is stored first. */
  const start = async (p: Principal, text: string, threadId: string | undefined, timeoutMs?: number, background?: boolean) => {
    if (threadId !== undefined && !isUuid(threadId)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
    await takeTurnBudget(s, p);
    return s.agent.start({
      channel: "chat",
      userId: p.userId,
      threadId,
      messages: [{ role: "user", content: text }],
      toolOutputs: [],
      model: "default",
      timeoutMs,
      background,
      surfacesGates: true,
    });
  };

  return new Elysia({ name: "chat" })
    .use(requireAuth(s))
    .post(
      "/api/chat",
      async ({ body, principal }) => {
        const r = await (await start(principal, body.message, body.thread_id, s.turnTimeoutMs)).result;
        return { thread_id: r.threadId, response_id: r.id, response: answerText(r), status: r.status, error: r.error };
      },
      { parse: authedJson(s), body: ChatBody },
    )
    .post(
      "/api/chat/send",
      async ({ body, principal }) => {
        const { turn, result } = await start(principal, body.content, body.thread_id, s.backgroundTurnTimeoutMs, true);
        void result.catch((e) => s.log.error(`chat turn ${turn.id}: ${(e as Error).message}`));
        return Response.json(
          { message_id: turn.id, response_id: turn.id, thread_id: turn.threadId, status: "accepted" },
          { status: 202 },
        );
      },
      { parse: authedJson(s), body: SendBody },
    )
    .get("/api/chat/events", ({ principal, request }) => {
      const authorization = request.headers.get("authorization");
      const stillAllowed = () => s.auth.authenticate(authorization).then((p) => p.userId === principal.userId, () => false);
      return sseResponse((send) => events.subscribe(principal.userId, send), "connected", { signal: request.signal, stillAllowed });
    })
    // `q`: only the threads whose title or messages hold it
    .get("/api/chat/threads", async ({ principal, query }): Promise<{ threads: ThreadSummary[] }> => {
      const q = typeof query.q === "string" ? query.q.trim() : "";
      return { threads: (q ? await searchThreads(s.db, principal.userId, q) : await listThreads(s.db, principal.userId)).map(summary) };
    })
    .post(
      "/api/chat/threads/:thread_id/compact",
      async ({ params, principal, request }) => {
        const threadId = params.thread_id;
        if (!isUuid(threadId)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
        await takeTurnBudget(s, principal);
        try {
          const item = await s.agent.compact(principal.userId, threadId, request.signal);
          const reply: Compacted = { thread_id: threadId, compacted: Boolean(item), compaction: item ? compactionMark(item) : null };
          return reply;
        } catch (e) {
          // the caller went away (closed the page, the connection dropped): nobody to tell, nothing went wrong
          if (request.signal.aborted) throw new InvalidRequest("The compaction was cancelled: the request ended before it finished.", "cancelled");
          // the model failed (reported as the proxy reports it): nothing was stored
          throw e instanceof TurnError ? UpstreamFailure.fromTurn(e) : e;
        }
      },
      { parse: "none" },
    )
    // the thread with its responses (404 after), gates and items: the same as deleting its conversation
    .delete("/api/chat/threads/:thread_id", async ({ principal, params }) => {
      if (!isUuid(params.thread_id)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
      if (!(await s.agent.deleteThread(principal.userId, params.thread_id))) throw new NotFound(`No thread found with id ${params.thread_id}.`);
      return new Response(null, { status: 204 });
    })
    .get("/api/chat/history", async ({ principal, query }): Promise<History> => {
      const threadId = String(query.thread_id ?? "");
      if (!isUuid(threadId)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
      return threadHistory(s.db, await ownThread(s, principal, threadId), (id) => events.isRunning(id));
    })
    .patch(
      "/api/chat/threads/:thread_id",
      async ({ principal, params, body }): Promise<ThreadSummary> => {
        if (!isUuid(params.thread_id)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
        const title = body.title.replace(/\s+/g, " ").trim();
        if (!title) throw new InvalidRequest("`title` must not be empty.");
        if (title.length > 200) throw new InvalidRequest("`title` must be at most 200 characters.");
        const thread = await ownThread(s, principal, params.thread_id);
        await renameThread(s.db, thread.id, title);
        return summary({ ...thread, title });
      },
      { parse: authedJson(s), body: RenameBody },
    );
}

/** The user's thread, or 404 (someone else's reads as none). */
export async function ownThread(s: Services, p: Principal, threadId: string): Promise<ThreadRow> {
  const thread = await getThread(s.db, threadId);
  if (!thread || thread.userId !== p.userId) throw new NotFound(`No thread found with id ${threadId}.`);
  return thread;
}

const summary = (t: Omit<ThreadListing, "waiting"> & { waiting?: ThreadListing["waiting"] }): ThreadSummary => ({
  id: t.id,
  title: t.title,
  channel: t.channel,
  created_at: isoFromSeconds(t.createdAt),
  updated_at: isoFromSeconds(t.updatedAt),
  waiting: t.waiting ?? null,
});
