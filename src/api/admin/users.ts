import { Type, type Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { authedJson, requireAdmin, requireAuth } from "../../http/auth";
import type { Services } from "../../services";
import { CreatedUser, NewToken, UserList, UserRecord } from "../../auth/user-wire";

const UsdSchema = Type.Number({ minimum: 0, maximum: 1e9, error: "must be an amount in USD (0 or more)." });

const RoleSchema = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")], { error: "must be owner, admin or member." });

export const CreateUserRequest = Type.Object({
  role: RoleSchema,
  email: Type.Optional(Type.String({ maxLength: 320, error: "must be a string of at most 320 characters." })),
  display_name: Type.Optional(Type.String({ maxLength: 200, error: "must be a string of at most 200 characters." })),
}, { additionalProperties: true });
export type CreateUserRequest = Static<typeof CreateUserRequest>;

export const UpdateUserRequest = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("suspended")], { error: "must be active or suspended." })),
    display_name: Type.Optional(Type.String({ maxLength: 200, error: "must be a string of at most 200 characters." })),
    /** What the user's turns may cost a day and a month, in USD; null removes that budget. */
    budget: Type.Optional(
      Type.Object(
        { daily_usd: Type.Optional(Type.Union([UsdSchema, Type.Null()])), monthly_usd: Type.Optional(Type.Union([UsdSchema, Type.Null()])) },
        { additionalProperties: false, error: "must be {daily_usd, monthly_usd}: amounts in USD, or null for none." },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1, error: "names nothing to change: give role, status, display_name or budget." },
);
export type UpdateUserRequest = Static<typeof UpdateUserRequest>;

const USERS = "/api/webchat/v2/admin/users";

/** The admin API of users: owners and admins only; the rules live in auth/users.ts. */
export function adminRoutes(s: Services) {
  return new Elysia({ name: "admin" })
    .use(requireAuth(s))
    .onBeforeHandle(({ principal }) => requireAdmin(principal))
    .get(USERS, async () => ({ users: await s.users.list() }), { response: UserList })
    .post(USERS, async ({ body, principal }) => s.users.create(principal, body), {
      parse: authedJson(s, requireAdmin),
      body: CreateUserRequest,
      response: CreatedUser,
    })
    .patch(`${USERS}/:user_id`, async ({ body, principal, params }) => s.users.update(principal, params.user_id, body), {
      parse: authedJson(s, requireAdmin),
      body: UpdateUserRequest,
      response: UserRecord,
    })
    .post(`${USERS}/:user_id/token`, ({ principal, params }) => s.users.rotateToken(principal, params.user_id), { response: NewToken })
    .delete(`${USERS}/:user_id`, async ({ principal, params }) => {
      await s.users.delete(principal, params.user_id);
      return new Response(null, { status: 204 });
    });
}
