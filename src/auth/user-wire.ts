// The admin API's replies about users (src/api/admin/users.ts), which `service users` reads
// over HTTP as well.
import { Type, type Static } from "@sinclair/typebox";

const Usd = Type.Union([Type.Number(), Type.Null()]);

/**
 * A user as the admin API and `service users` show it. `sign_in` says how they sign in: the
 * `instance_token` (the instance owner), a per-user `token`, and the SSO providers they used.
 */
export const UserRecord = Type.Object({
  user_id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  display_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  role: Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")]),
  created_at: Type.String(),
  updated_at: Type.String(),
  sign_in: Type.Array(Type.String()),
  /** What the user's turns may cost a day and a month (USD), null where no budget is set. */
  budget: Type.Object({ daily_usd: Usd, monthly_usd: Usd }),
});
export type UserRecord = Static<typeof UserRecord>;

export const UserList = Type.Object({ users: Type.Array(UserRecord) });
/** A new user, with their token: shown only now. */
export const CreatedUser = Type.Object({ api_token: Type.String(), user: UserRecord });
/** A user's new token: every older one is refused from now on. */
export const NewToken = Type.Object({ api_token: Type.String() });
