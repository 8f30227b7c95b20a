import { Type, type Static } from "@sinclair/typebox";
import type { ViewRequest } from "../../agent/turns";
import { itemId, newUuid } from "../../conversation/ids";
import { isUntrusted, type ConversationItem } from "../../conversation/items";
import { InvalidRequest, TurnError, UpstreamFailure } from "../../errors";
import type { Services } from "../../services";
import type { CompactionSeal } from "./compaction-seal";
import { itemResource, ItemResource, Usage, usage } from "./objects";

/** OpenAI's `compaction` output item: the summary, sealed (see CompactionSeal). */
export const CompactionOutput = Type.Object({ type: Type.Literal("compaction"), id: Type.String(), encrypted_content: Type.String(), created_by: Type.String() });

/** POST /responses/compact's reply: the user's messages verbatim, then one compaction item. */
export const CompactedResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal("response.compaction"),
  created_at: Type.Integer(),
  output: Type.Array(Type.Union([ItemResource, CompactionOutput])),
  usage: Usage,
});
export type CompactedResponse = Static<typeof CompactedResponse>;

/**
 * Compacts what the model would see of the request's thread and input into OpenAI's compacted
 * window: the user's own messages as they were (untrusted ones stay only in the summary, so
 * they do not come back as the user's word), then a compaction item holding a summary of
 * everything, sealed for this user. Nothing is stored: the caller sends the window back as the
 * next request's input.
 */
export async function compactWindow(s: Services, seal: CompactionSeal, view: ViewRequest, signal: AbortSignal): Promise<CompactedResponse> {
  if (!view.threadId && !view.messages.length && !view.toolOutputs.length) {
    throw new InvalidRequest("Nothing to compact: send `input`, or name a thread with `previous_response_id` or `conversation`.");
  }
  let summary: Awaited<ReturnType<Services["agent"]["summarise"]>>;
  try {
    summary = await s.agent.summarise(view, signal);
  } catch (e) {
    if (signal.aborted && !(e instanceof TurnError)) {
      throw new UpstreamFailure("The summary was not done in time (TURN_TIMEOUT_S); nothing was compacted.", 504, "server_error", "turn_timeout");
    }
    throw e instanceof TurnError ? UpstreamFailure.fromTurn(e) : e;
  }
  const createdAt = Math.floor(Date.now() / 1000);
  const kept = summary.items.filter((i): i is Extract<ConversationItem, { type: "message" }> => i.type === "message" && i.role === "user" && !isUntrusted(i));
  const encrypted = seal.seal(view.userId, { summary: summary.summary, untrusted: summary.untrusted, created_at: createdAt });
  return {
    id: `cmp_${newUuid().replaceAll("-", "")}`,
    object: "response.compaction",
    created_at: createdAt,
    output: [...kept.map(itemResource), { type: "compaction", id: itemId(), encrypted_content: encrypted, created_by: "service" }],
    usage: usage(summary.usage),
  };
}
