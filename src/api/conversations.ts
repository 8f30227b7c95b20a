import { Elysia } from "elysia";
import { instructionsBlock } from "../agent/context";
import { Type } from "@sinclair/typebox";
import { storedItem } from "../agent/turn-types";
import { conversationId, newUuid, threadOfConversation } from "../conversation/ids";
import type { ConversationItem } from "../conversation/items";
import type { Principal } from "../auth/principal";
import { InvalidRequest, NotFound } from "../errors";
import { appendItems, deleteItem, findItem, getGate, getThread, ownThread, pageItems, setThreadMetadata, type ThreadRow } from "../store/conversations";
import { authedJson, requireAuth } from "../http/auth";
import { itemList, itemResource } from "./responses/objects";
import { InputItemSchema, MetadataField, type InputItemBody } from "./responses/request";
import { inputItems, inputReader } from "./responses/input";
import { CompactionSeal } from "./responses/compaction-seal";
import { ListQuery } from "./responses/lists";
import { threadTitle } from "../conversation/title";
import type { Services } from "../services";

const MAX_ITEMS = 20;
const Items = Type.Array(InputItemSchema, { maxItems: MAX_ITEMS, error: `must be an array of at most ${MAX_ITEMS} input items.` });
const CreateConversation = Type.Object({ items: Type.Optional(Type.Union([Items, Type.Null()], { error: Items.error })), metadata: MetadataField }, { additionalProperties: true });
const UpdateConversation = Type.Object({ metadata: Type.Union([MetadataField.anyOf[0], Type.Null()], { error: MetadataField.error }) }, { additionalProperties: true });
const AddItems = Type.Object({ items: Type.Array(InputItemSchema, { minItems: 1, maxItems: MAX_ITEMS, error: `must be an array of 1 to ${MAX_ITEMS} input items.` }) }, { additionalProperties: true });

const conversation = (thread: ThreadRow) => ({ id: conversationId(thread.id), object: "conversation" as const, created_at: thread.createdAt, metadata: thread.metadata ?? {} });

/**
 * The Conversations API: a conversation is a thread (`conv_` + its UUID's hex), so the threads
 * of the web UI, the TUI and the webhook channel are conversations too. Deleting an item takes
 * it out of what the model sees on later turns (unless a summary already stands for it).
 */
export function conversationRoutes(s: Services, prefix: string) {
  const seal = new CompactionSeal(s.home);
  const threadOf = async (id: string, p: Principal) => {
    const threadId = threadOfConversation(id);
    const thread = threadId ? await ownThread(s.db, p.userId, threadId) : undefined;
    if (!thread) throw new NotFound(`No conversation found with id ${id}.`);
    return thread;
  };
  /** Input items as stored in a conversation: system and developer messages become instruction blocks. */
  const toStored = async (items: InputItemBody[], p: Principal): Promise<ConversationItem[]> => {
    const { messages, toolOutputs, system } = await inputItems(items, inputReader(s, p.userId, seal), "items");
    return [
      ...system.map((text) => ({ role: "user" as const, content: instructionsBlock(text) })),
      ...messages,
      ...toolOutputs.map((o) => ({ type: "function_call_output" as const, ...o })),
    ].map(storedItem);
  };
  const json = { parse: authedJson(s) };

  return new Elysia({ name: "conversations", seed: prefix, prefix })
    .use(requireAuth(s))
    .post(
      "/conversations",
      async ({ body, principal }) => {
        const items = await toStored(body.items ?? [], principal);
        const threadId = newUuid();
        await appendItems(s.db, {
          threadId,
          userId: principal.userId,
          responseId: conversationId(threadId),
          items,
          create: { metadata: body.metadata ?? {}, title: titleOf(items) },
        });
        return conversation((await getThread(s.db, threadId))!);
      },
      { ...json, body: CreateConversation },
    )
    .get("/conversations/:id", async ({ params, principal }) => conversation(await threadOf(params.id, principal)))
    .post(
      "/conversations/:id",
      async ({ params, body, principal }) => {
        const thread = await threadOf(params.id, principal);
        await setThreadMetadata(s.db, thread.id, body.metadata ?? {});
        return conversation((await getThread(s.db, thread.id))!);
      },
      { ...json, body: UpdateConversation },
    )
    .delete("/conversations/:id", async ({ params, principal }) => {
      await s.agent.deleteThread(principal.userId, (await threadOf(params.id, principal)).id);
      return { id: params.id, object: "conversation.deleted", deleted: true };
    })
    .get(
      "/conversations/:id/items",
      async ({ params, principal, query }) => {
        const thread = await threadOf(params.id, principal);
        const page = await pageItems(s.db, thread.id, { limit: query.limit ?? 20, order: query.order ?? "desc", after: query.after });
        if (!page) throw new InvalidRequest(`\`after\` ${JSON.stringify(query.after)} is not an item of this conversation.`);
        return itemList(page.items.map(itemResource), page.hasMore);
      },
      { query: ListQuery },
    )
    .get("/conversations/:id/items/:item_id", async ({ params, principal }) => {
      const thread = await threadOf(params.id, principal);
      const item = await findItem(s.db, params.item_id, principal.userId, thread.id);
      if (!item) throw new NotFound(`No item ${params.item_id} in conversation ${params.id}.`);
      return itemResource(item);
    })
    .delete("/conversations/:id/items/:item_id", async ({ params, principal }) => {
      const thread = await threadOf(params.id, principal);
      await s.agent.withThread(thread.id, async () => {
        const item = await findItem(s.db, params.item_id, principal.userId, thread.id);
        if (!item) throw new NotFound(`No item ${params.item_id} in conversation ${params.id}.`);
        const gate = await getGate(s.db, thread.id);
        if (gate && item.type === "function_call" && item.call_id === gate.callId) {
          throw new InvalidRequest(`Item ${params.item_id} is the call this conversation waits on (${gate.callId}); resolve it before deleting it.`);
        }
        await deleteItem(s.db, thread.id, item.id);
      });
      return conversation((await getThread(s.db, thread.id))!);
    })
    .post(
      "/conversations/:id/items",
      async ({ params, body, principal }) => {
        const thread = await threadOf(params.id, principal);
        const items = await toStored(body.items, principal);
        await s.agent.withThread(thread.id, async () => {
          const gate = await getGate(s.db, thread.id);
          if (gate) throw new InvalidRequest(`This conversation waits on a pending ${gate.kind.replace("_", " ")} call (${gate.callId}); resolve it before adding items.`);
          await appendItems(s.db, { threadId: thread.id, userId: principal.userId, responseId: conversationId(thread.id), items });
        });
        return itemList(items.map(itemResource), false);
      },
      { ...json, body: AddItems },
    );
}

/** A new conversation's title: its first user message that says something besides instructions. */
function titleOf(items: ConversationItem[]): string | undefined {
  for (const i of items) {
    const title = i.type === "message" && i.role === "user" ? threadTitle(i.content) : undefined;
    if (title) return title;
  }
  return undefined;
}
