import { t } from "elysia";
import { InvalidRequest } from "../../errors";
import { itemList } from "./objects";

/** The query of OpenAI's item lists (input items, conversation items): `limit`, `order`, `after`. */
export const ListQuery = t.Object({
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, error: "must be an integer from 1 to 100." })),
  order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { error: "must be asc or desc." })),
  after: t.Optional(t.String({ minLength: 1, error: "must be an item id." })),
});

/** One page of items in OpenAI's list shape: `order` (default desc), after the item `after`, `limit` (default 20). */
export function page<T extends { id: string }>(all: T[], q: { limit?: number; order?: "asc" | "desc"; after?: string }) {
  const ordered = q.order === "asc" ? all : [...all].reverse();
  let start = 0;
  if (q.after) {
    start = ordered.findIndex((i) => i.id === q.after) + 1;
    if (!start) throw new InvalidRequest(`\`after\` ${JSON.stringify(q.after)} is not an item of this list.`);
  }
  const limit = q.limit ?? 20;
  return itemList(ordered.slice(start, start + limit), start + limit < ordered.length);
}
