import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { newUuid } from "../../agent/ids";
import { hashToken, newToken } from "../../auth/tokens";
import { Forbidden, InvalidRequest } from "../../errors";
import { createUserWithToken, type UserRow } from "../../store/users";
import { requireAdmin, requireAuth } from "../auth";
import { readJsonObject } from "../body";
import type { Services } from "../services";

export const CreateUserRequest = Type.Object({
  role: Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")]),
  email: Type.Optional(Type.String({ maxLength: 320 })),
  display_name: Type.Optional(Type.String({ maxLength: 200 })),
});
export type CreateUserRequest = Static<typeof CreateUserRequest>;

export const USER_TOKEN_PREFIX = "svc_";

export function adminRoutes(s: Services) {
  return new Elysia({ name: "admin" }).use(requireAuth(s)).post(
    "/api/webchat/v2/admin/users",
    async ({ request, principal }) => {
      requireAdmin(principal);
      const body = await readJsonObject(request);
      if (!Value.Check(CreateUserRequest, body)) {
        const e = Value.Errors(CreateUserRequest, body).First()!;
        const field = e.path.split("/")[1] || "body";
        if (field === "role") throw new InvalidRequest("`role` is required and must be owner, admin or member.");
        throw new InvalidRequest(`\`${field}\` is malformed: ${e.message.toLowerCase()}.`);
      }
      if (body.role === "owner" && principal.role !== "owner") throw new Forbidden("Only an owner can create another owner.");
      const apiToken = newToken(USER_TOKEN_PREFIX);
      const user = await createUserWithToken(
        s.db,
        { id: newUuid(), role: body.role, email: body.email, displayName: body.display_name },
        { id: newUuid(), hash: hashToken(apiToken) },
      );
      return { api_token: apiToken, user: userRecord(user) };
    },
    { parse: "none" },
  );
}

export function userRecord(u: UserRow) {
  return {
    user_id: u.id,
    email: u.email,
    display_name: u.displayName,
    status: u.status,
    role: u.role,
    created_at: u.createdAt,
    updated_at: u.updatedAt,
  };
}
