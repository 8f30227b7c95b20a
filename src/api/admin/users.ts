import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { InvalidRequest } from "../../errors";
import { requireAdmin, requireAuth } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import type { Services } from "../../services";

const RoleSchema = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")]);

export const CreateUserRequest = Type.Object({
  role: RoleSchema,
  email: Type.Optional(Type.String({ maxLength: 320 })),
  display_name: Type.Optional(Type.String({ maxLength: 200 })),
});
export type CreateUserRequest = Static<typeof CreateUserRequest>;

export const UpdateUserRequest = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("suspended")])),
    display_name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserRequest = Static<typeof UpdateUserRequest>;

const USERS = "/api/webchat/v2/admin/users";

/** The admin API of users: owners and admins only; the rules live in auth/users.ts. */
export function adminRoutes(s: Services) {
  return new Elysia({ name: "admin" })
    .use(requireAuth(s))
    .onBeforeHandle(({ principal }) => requireAdmin(principal))
    .get(USERS, async () => ({ users: await s.users.list() }))
    .post(USERS, async ({ request, principal }) => s.users.create(principal, checked(CreateUserRequest, await readJsonObject(request))), {
      parse: "none",
    })
    .patch(
      `${USERS}/:user_id`,
      async ({ request, principal, params }) => s.users.update(principal, params.user_id, checked(UpdateUserRequest, await readJsonObject(request))),
      { parse: "none" },
    )
    .post(`${USERS}/:user_id/token`, ({ principal, params }) => s.users.rotateToken(principal, params.user_id))
    .delete(`${USERS}/:user_id`, async ({ principal, params }) => {
      await s.users.delete(principal, params.user_id);
      return new Response(null, { status: 204 });
    });
}

/** The body, or a 400 naming the field that is wrong. */
function checked<T extends TSchema>(schema: T, body: Record<string, unknown>): Static<T> {
  if (Value.Check(schema, body)) return body as Static<T>;
  const e = Value.Errors(schema, body).First()!;
  const field = e.path.split("/")[1];
  if (!field) {
    if (!Object.keys(body).length) throw new InvalidRequest("The body names nothing to change: give role, status or display_name.");
    const extra = Object.keys(body).find((k) => !(k in (schema as unknown as { properties: object }).properties));
    throw new InvalidRequest(`\`${extra ?? "body"}\` is not a field of this request.`);
  }
  if (field === "role") throw new InvalidRequest("`role` must be owner, admin or member.");
  if (field === "status") throw new InvalidRequest("`status` must be active or suspended.");
  if (!(field in (schema as unknown as { properties: object }).properties)) throw new InvalidRequest(`\`${field}\` is not a field of this request.`);
  throw new InvalidRequest(`\`${field}\` is malformed: ${e.message.toLowerCase()}.`);
}
