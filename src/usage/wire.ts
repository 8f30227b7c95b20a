// The shapes of GET /api/usage, for the server and the web UI (which imports the types only).
import { Type, type Static } from "@sinclair/typebox";

const Totals = {
  turns: Type.Integer(),
  input_tokens: Type.Integer(),
  cached_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost_usd: Type.Number(),
};

/** GET /api/usage's answer (and `service usage`'s). */
export const UsageReport = Type.Object({
  from: Type.String(),
  to: Type.String(),
  group_by: Type.Union([Type.Literal("day"), Type.Literal("user"), Type.Literal("model"), Type.Literal("channel"), Type.Literal("routine")]),
  /** One row per key: a day (YYYY-MM-DD), a user id, a model, a channel, a routine id (null: no routine). */
  rows: Type.Array(Type.Object({ key: Type.Union([Type.String(), Type.Null()]), ...Totals })),
  total: Type.Object(Totals),
  /** The budgets that apply to the caller, with what was spent against each. */
  budgets: Type.Array(
    Type.Object({
      scope: Type.Union([Type.Literal("user"), Type.Literal("instance")]),
      period: Type.Union([Type.Literal("day"), Type.Literal("month")]),
      limit_usd: Type.Number(),
      spent_usd: Type.Number(),
    }),
  ),
});
export type UsageReport = Static<typeof UsageReport>;

export const UsageQuery = Type.Object({
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  group_by: Type.Optional(Type.String()),
  user_id: Type.Optional(Type.String()),
});
export type UsageQuery = Static<typeof UsageQuery>;

