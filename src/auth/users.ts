// Managing users: the rules of who may do what to whom, shared by the admin API and
// `service users` (which runs them against the database when no service is running).
import { rmSync } from "node:fs";
import { userFilesDir } from "../config/load";
import { newUuid } from "../conversation/ids";
import { Forbidden, InvalidRequest, NotFound } from "../errors";
import { vectorDims } from "../store/memory";
import { deleteUserSessions, signInMethods } from "../store/sessions";
import type { Db } from "../store/db";
import {
  createUserWithToken,
  deleteUserData,
  getUser,
  listUsers,
  OWNER_ID,
  replaceTokens,
  updateUser,
  type Role,
  type UserRow,
} from "../store/users";
import { hashToken, newToken } from "./tokens";
import type { UserRecord } from "./user-wire";

export const USER_TOKEN_PREFIX = "svc_";

/** Who acts: an owner or an admin (members never reach these). */
export interface Actor {
  role: Role;
}

export interface UserPatch {
  role?: Role;
  status?: "active" | "suspended";
  display_name?: string;
  /** USD; null removes that budget, undefined leaves it. */
  budget?: { daily_usd?: number | null; monthly_usd?: number | null };
}

const micro = (usd: number | null) => (usd === null ? null : Math.round(usd * 1e6));
const usd = (micro: number | null) => (micro === null ? null : micro / 1e6);

/** A user as the admin API and `service users` show it (auth/user-wire.ts). */
export function userRecord(u: UserRow, methods: Map<string, string[]>): UserRecord {
  return {
    user_id: u.id,
    email: u.email,
    display_name: u.displayName,
    status: u.status,
    role: u.role,
    created_at: u.createdAt,
    updated_at: u.updatedAt,
    sign_in: u.id === OWNER_ID ? ["instance_token", ...(methods.get(u.id) ?? [])] : (methods.get(u.id) ?? []),
    budget: { daily_usd: usd(u.budgetDailyMicroUsd), monthly_usd: usd(u.budgetMonthlyMicroUsd) },
  };
}
export type { UserRecord };

export class UserAdmin {
  constructor(
    private readonly deps: {
      db: Db;
      /** The service home: a deleted user's files folder is `files/<user id>/` in it. */
      home: string;
      /** Drops what the service remembers of the user's tokens, so a change applies at once. */
      forget?: (userId: string) => void;
      /** Ends the user's running turns before their data goes (so none is stored after it). */
      cancelTurns?: (userId: string) => Promise<void>;
      /** Cuts short the turns the user has running now (the user was suspended). */
      stopTurns?: (userId: string) => Promise<void>;
    },
  ) {}

  async list(): Promise<UserRecord[]> {
    const methods = await signInMethods(this.deps.db);
    return (await listUsers(this.deps.db)).map((u) => userRecord(u, methods));
  }

  async create(actor: Actor, input: { role: Role; email?: string; display_name?: string }): Promise<{ api_token: string; user: UserRecord }> {
    if (input.role === "owner" && actor.role !== "owner") throw new Forbidden("Only an owner can create another owner.");
    const apiToken = newToken(USER_TOKEN_PREFIX);
    const user = await createUserWithToken(
      this.deps.db,
      { id: newUuid(), role: input.role, email: input.email, displayName: input.display_name },
      { id: newUuid(), hash: hashToken(apiToken) },
    );
    return { api_token: apiToken, user: userRecord(user, new Map([[user.id, ["token"]]])) };
  }

  async update(actor: Actor, id: string, patch: UserPatch): Promise<UserRecord> {
    const user = await this.#target(actor, id);
    if (patch.role === "owner" && actor.role !== "owner") throw new Forbidden("Only an owner can make another owner.");
    if (id === OWNER_ID && patch.status === "suspended") throw new InvalidRequest("The instance owner cannot be suspended.", "instance_owner");
    if (id === OWNER_ID && patch.role !== undefined && patch.role !== "owner") {
      throw new InvalidRequest("The instance owner stays an owner.", "instance_owner");
    }
    const updated = await updateUser(this.deps.db, user.id, {
      ...(patch.role !== undefined ? { role: patch.role } : {}),
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.display_name !== undefined ? { displayName: patch.display_name } : {}),
      ...(patch.budget?.daily_usd !== undefined ? { budgetDailyMicroUsd: micro(patch.budget.daily_usd) } : {}),
      ...(patch.budget?.monthly_usd !== undefined ? { budgetMonthlyMicroUsd: micro(patch.budget.monthly_usd) } : {}),
    });
    // a suspension ends the user's SSO sessions for good: they do not come back with "active"
    if (patch.status === "suspended") await deleteUserSessions(this.deps.db, id);
    this.deps.forget?.(id);
    if (patch.status === "suspended") await this.deps.stopTurns?.(id);
    return userRecord(updated ?? user, await signInMethods(this.deps.db));
  }

  /** A new token for the user; every older one, and every SSO session, stops working at once. */
  async rotateToken(actor: Actor, id: string): Promise<{ api_token: string }> {
    await this.#target(actor, id);
    if (id === OWNER_ID) {
      throw new InvalidRequest("The instance owner signs in with the instance token (webui-token in the service home), not a user token.", "instance_owner");
    }
    const apiToken = newToken(USER_TOKEN_PREFIX);
    await replaceTokens(this.deps.db, id, { id: newUuid(), hash: hashToken(apiToken) });
    this.deps.forget?.(id);
    return { api_token: apiToken };
  }

  /** Deletes the user and all their data: conversations, memory, jobs, policies, credentials, tokens, files. */
  async delete(actor: Actor, id: string): Promise<void> {
    await this.#target(actor, id);
    if (id === OWNER_ID) throw new InvalidRequest("The instance owner cannot be deleted.", "instance_owner");
    this.deps.forget?.(id);
    await this.deps.cancelTurns?.(id);
    await deleteUserData(this.deps.db, id, await vectorDims(this.deps.db));
    this.deps.forget?.(id);
    const files = userFilesDir(this.deps.home, id);
    if (files) rmSync(files, { recursive: true, force: true });
  }

  async #target(actor: Actor, id: string): Promise<UserRow> {
    const user = await getUser(this.deps.db, id);
    if (!user) throw new NotFound(`No user with id ${id}.`);
    if (user.role === "owner" && actor.role !== "owner") throw new Forbidden("Only an owner can change an owner.");
    return user;
  }
}
