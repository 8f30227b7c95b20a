import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { ConversationItem } from "../conversation/items";
import { isUuid } from "../conversation/ids";
import { answerText } from "../agent/turn-types";
import type { Principal } from "../auth/principal";
import { authedJson, requireAuth, takeTurnBudget } from "../http/auth";
import { sseResponse } from "../http/sse";
import { isoFromSeconds } from "../http/time";
import type { Services } from "../services";
import { InvalidRequest, NotFound, TurnError, UpstreamFailure } from "../errors";
import type { CompactionItem } from "../conversation/items";
import { unwrapToolOutput } from "../safety/injection";
import { loadTimeline, type Placed } from "../store/compactions";
import { getGate, getThread, listThreads } from "../store/conversations";
import type { Compacted, History, HistoryItem, ThreadSummary } from "./chat-wire";
import { compactionMark, type ChatEventHub } from "./events";

const text = { minLength: 1, error: "is required and must be a non-empty string." };
const threadField = Type.Optional(Type.String({ error: "must be a thread UUID." }));
const ChatBody = Type.Object({ message: Type.String(text), thread_id: threadField }, { additionalProperties: true });
const SendBody = Type.Object({ content: Type.String(text), thread_id: threadField }, { additionalProperties: true });

/** The local chat endpoints the web UI and the terminal UI are built on. */
export function chatRoutes(s: Services, events: ChatEventHub) {
  /** A turn of the chat; `background` when its caller is answered before it ends (202), so that it is stored first. */
  const start = (p: Principal, text: string, threadId: string | undefined, timeoutMs?: number, background?: boolean) => {
    if (threadId !== undefined && !isUuid(threadId)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
    takeTurnBudget(s, p);
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
    .get("/api/chat/threads", async ({ principal }): Promise<{ threads: ThreadSummary[] }> => ({
      threads: (await listThreads(s.db, principal.userId)).map((t) => ({
        id: t.id,
        title: t.title,
        channel: t.channel,
        created_at: isoFromSeconds(t.createdAt),
        updated_at: isoFromSeconds(t.updatedAt),
        waiting: t.waiting,
      })),
    }))
    .post(
      "/api/chat/threads/:thread_id/compact",
      async ({ params, principal, request }) => {
        const threadId = params.thread_id;
        if (!isUuid(threadId)) throw new InvalidRequest("`thread_id` must be a thread UUID.");
        takeTurnBudget(s, principal);
        try {
          const item = await s.agent.compact(principal.userId, threadId, request.signal);
          const reply: Compacted = { thread_id: threadId, compacted: Boolean(item), compaction: item ? compactionMark(item) : null };
          return reply;
        } catch (e) {
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
      const thread = await getThread(s.db, threadId);
      if (!thread || thread.userId !== principal.userId) throw new NotFound(`No thread found with id ${threadId}.`);
      const gate = await getGate(s.db, threadId);
      return {
        thread_id: threadId,
        title: thread.title,
        items: historyItems(await loadTimeline(s.db, threadId)),
        waiting: gate
          ? {
              kind: gate.kind,
              call_id: gate.callId,
              tool: "details" in gate ? gate.details.tool : null,
              arguments: "details" in gate ? gate.details.arguments : null,
              // an approval: where the call's data would go, or the identity file's change
              ...(gate.kind === "approval" && gate.details.destination ? { destination: gate.details.destination } : {}),
              ...(gate.kind === "approval" && gate.details.diff ? { diff: gate.details.diff } : {}),
              // an OAuth gate: the extension to connect, and the page that does it
              ...(gate.kind === "oauth" ? { extension: gate.details.extension, connect_url: gate.details.connect_url } : {}),
            }
          : null,
      };
    });
}

/**
 * The conversation as the chat UIs show it: messages, tool calls with their results, and a
 * mark before the first item each compaction kept (where the summary starts to stand in).
 */
function historyItems(timeline: Placed<ConversationItem | CompactionItem>[]): HistoryItem[] {
  // people see the tool's output, not the <tool_output> wrapper the model gets it in
  const outputs = new Map(timeline.flatMap(({ item: i }) => (i.type === "function_call_output" ? [[i.call_id, unwrapToolOutput(i.output)] as const] : [])));
  const at = (p: Placed<ConversationItem | CompactionItem>) => (p.item.type === "compaction" ? p.item.first_kept_seq - 0.5 : p.seq);
  return [...timeline]
    .sort((a, b) => at(a) - at(b))
    .flatMap(({ item: i }): HistoryItem[] => {
      if (i.type === "compaction") return [compactionMark(i)];
      if (i.type === "message") return [{ type: "message", id: i.id, role: i.role, content: i.content, ...(i.status ? { status: i.status } : {}) }];
      if (i.type === "function_call") {
        return [{ type: "tool_call", id: i.id, call_id: i.call_id, name: i.name, arguments: i.arguments, output: outputs.get(i.call_id) ?? null, external: i.external }];
      }
      return [];
    });
}
