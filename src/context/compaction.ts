import { Type, type Static } from "@sinclair/typebox";

/**
 * A summary of a thread's older items, stored in the thread like any item. Requests carry
 * the latest one in place of everything before `first_kept_seq`; retrieval and history
 * still show every item, with this one as a mark where the summary begins to stand in.
 */
export const CompactionItem = Type.Object({
  type: Type.Literal("compaction"),
  id: Type.String(),
  summary: Type.String(),
  /** Items from this seq on are carried verbatim after the summary. */
  first_kept_seq: Type.Integer({ minimum: 0 }),
  /** How many items of the thread the summary stands for (this and earlier compactions'). */
  summarised_items: Type.Integer({ minimum: 0 }),
  /** What asked for it: a request that would not fit, the provider refusing one, or a person. */
  trigger: Type.Union([Type.Literal("auto"), Type.Literal("overflow"), Type.Literal("manual")]),
  /** Whether the agent's silent memory step ran first, and how many documents it wrote. */
  memory_notes: Type.Integer({ minimum: 0 }),
  created_at: Type.Integer(),
});

export type CompactionItem = Static<typeof CompactionItem>;
