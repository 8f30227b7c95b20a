import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { answerText } from "../agent/turn-types";
import type { Principal } from "../auth/principal";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import { sseResponse } from "../http/sse";
import { isoFromSeconds } from "../http/time";
import type { Services } from "../services";
import { InvalidRequest, ThreadNotFound, TurnError, UpstreamFailure } from "../errors";
import { renameThread, searchThreads } from "../store/chat-threads";
import { listThreads, ownThread, type ThreadListing, type ThreadRow } from "../store/conversations";
import { threadHistory } from "./chat-history";
import { Accepted, ChatReply, Compacted, History, ThreadId, ThreadList, ThreadParams, ThreadSummary } from "./chat-wire";
import { compactionMark, type ChatEventHub } from "./events";
import { said } from "../agent/turn-types";

const text = { minLength: 1, error: "is required and must be a non-empty string." };
const threadField = Type.Optional(ThreadId);
const ChatBody = Type.Object({ message: Type.String(text), thread_id: threadField }, { additionalProperties: true });
const SendBody = Type.Object({ content: Type.String(text), thread_id: threadField }, { additionalProperties: true });
const RenameBody = Type.Object({ title: Type.String({ error: "is required and must be a string." }) }, { additionalProperties: true });
const HistoryQuery = Type.Object({ thread_id: ThreadId }, { additionalProperties: true });

/** The local chat endpoints the web UI and the terminal UI are built on. */
export function chatRoutes(s: Services, events: ChatEventHub) {
  /** A turn of the chat; `background` when its caller is answered before it ends (202), so that it is stored first. */
  const start = async (p: Principal, text: string, threadId: string | undefined, timeoutMs?: number, background?: boolean) => {
    await takeTurnBudget(s, p);
    return s.agent.start({
      channel: "chat",
      userId: p.userId,
      threadId,
      input: said({ role: "user", content: text }),
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
      async ({ body, principal }): Promise<ChatReply> => {
        const r = await (await start(principal, body.message, body.thread_id, s.turnTimeoutMs)).result;
        return { thread_id: r.threadId, response_id: r.id, response: answerText(r), status: r.status, error: r.error };
      },
      { parse: authedJson(s), body: ChatBody, response: ChatReply },
    )
    .post(
      "/api/chat/send",
      async ({ body, principal, status }) => {
        const { turn, result } = await start(principal, body.content, body.thread_id, s.backgroundTurnTimeoutMs, true);
        void result.catch((e) => s.log.error(`chat turn ${turn.id}: ${(e as Error).message}`));
        return status(202, { message_id: turn.id, response_id: turn.id, thread_id: turn.threadId, status: "accepted" as const });
      },
      { parse: authedJson(s), body: SendBody, response: { 202: Accepted } },
    )
    .get("/api/chat/events", ({ principal, request }) => {
      const authorization = request.headers.get("authorization");
      const stillAllowed = () => s.auth.authenticate(authorization).then((p) => p.userId === principal.userId, () => false);
      return sseResponse((send) => events.subscribe(principal.userId, send), "connected", { signal: request.signal, stillAllowed });
    })
    // `q`: only the threads whose title or messages hold it
    .get(
      "/api/chat/threads",
      async ({ principal, query }) => {
        const q = typeof query.q === "string" ? query.q.trim() : "";
        return { threads: (q ? await searchThreads(s.db, principal.userId, q) : await listThreads(s.db, principal.userId)).map(summary) };
      },
      { response: ThreadList },
    )
    .post(
      "/api/chat/threads/:thread_id/compact",
      async ({ params, principal, request }) => {
        const threadId = params.thread_id;
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
      { parse: "none", params: ThreadParams, response: Compacted },
    )
    // the thread with its responses (404 after), gates and items: the same as deleting its conversation
    .delete(
      "/api/chat/threads/:thread_id",
      async ({ principal, params }) => {
        if (!(await s.agent.deleteThread(principal.userId, params.thread_id))) throw new ThreadNotFound(params.thread_id);
        return new Response(null, { status: 204 });
      },
      { params: ThreadParams },
    )
    .get(
      "/api/chat/history",
      async ({ principal, query }): Promise<History> => threadHistory(s.db, await chatThread(s, principal, query.thread_id), (id) => events.isRunning(id)),
      { query: HistoryQuery, response: History },
    )
    .patch(
      "/api/chat/threads/:thread_id",
      async ({ principal, params, body }): Promise<ThreadSummary> => {
        const title = body.title.replace(/\s+/g, " ").trim();
        if (!title) throw new InvalidRequest("`title` must not be empty.");
        if (title.length > 200) throw new InvalidRequest("`title` must be at most 200 characters.");
        const thread = await chatThread(s, principal, params.thread_id);
        await renameThread(s.db, thread.id, title);
        return summary({ ...thread, title });
      },
      { parse: authedJson(s), params: ThreadParams, body: RenameBody, response: ThreadSummary },
    );
}

/** The user's thread, or 404 (someone else's reads as none). */
export async function chatThread(s: Services, p: Principal, threadId: string): Promise<ThreadRow> {
  const thread = await ownThread(s.db, p.userId, threadId);
  if (!thread) throw new ThreadNotFound(threadId);
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
