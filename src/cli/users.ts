import type { Static, TSchema, TUndefined } from "@sinclair/typebox";
import { UserAdmin, type UserPatch } from "../auth/users";
import type { CreatedUser, NewToken, UserList, UserRecord } from "../auth/user-wire";
import { configuredInstanceToken, databaseUrl, loadConfig, servicePaths, type Env, type Paths } from "../config/load";
import type { Config } from "../config/schema";
import { ServiceError } from "../errors";
import { openDatabase } from "../store/db";
import type { Role } from "../store/users";
import { parseSubcommand, UsageError } from "./args";
import { findInstance } from "./instance";
import { ApiError, ChatClient, ConnectionError } from "../client/http";

export const USERS_USAGE = `Usage: service users <command> [options]

Manages the users of the service. When \`service serve\` is running for this home, the
command goes through its admin API with the instance token, so a suspension, a new token or
a deletion applies to the very next request; otherwise it works on the database directly.

Commands:
  list                       every user: id, role, status, email, name, how they sign in
  create [--role R]          a new user (member, admin or owner; default member) and its token
         [--email E] [--name N]
  suspend <user>             refuse the user's tokens (the instance owner cannot be suspended)
  activate <user>            accept them again
  token <user>               a new token for the user; the old ones stop working at once
  delete <user> [--yes]      the user and all their data: conversations, memory, jobs, files

<user> is a user id or an email address.

Options:
  --json                     print JSON (list, create, token)
  --home DIR                 service home (default: $SERVICE_HOME or ~/.service)
  -h, --help                 this text
`;

const COMMANDS = ["list", "create", "suspend", "activate", "token", "delete"] as const;
type Command = (typeof COMMANDS)[number];

/** What the commands need, from the running service (HTTP) or from the database. */
interface Users {
  list(): Promise<UserRecord[]>;
  create(input: { role: Role; email?: string; display_name?: string }): Promise<{ api_token: string; user: UserRecord }>;
  update(id: string, patch: UserPatch): Promise<UserRecord>;
  rotateToken(id: string): Promise<{ api_token: string }>;
  delete(id: string): Promise<void>;
  close(): void;
}

class Failure extends Error {}

export async function users(argv: string[]): Promise<number> {
  const parsed = parseSubcommand(argv, "users", USERS_USAGE, (command) =>
    COMMANDS.includes(command as Command)
      ? {
          json: { type: "boolean" },
          home: { type: "string" },
          ...(command === "create" ? { role: { type: "string" }, email: { type: "string" }, name: { type: "string" } } : {}),
          ...(command === "delete" ? { yes: { type: "boolean", short: "y" } } : {}),
        }
      : undefined,
  );
  if (!parsed) return 0;
  const { flags: f } = parsed;
  const command = parsed.command as Command;
  const wanted = command === "list" || command === "create" ? 0 : 1;
  if (parsed.positionals.length !== wanted) {
    throw new UsageError(wanted ? `${command} takes one user (an id or an email address)` : `${command} takes no arguments`, USERS_USAGE);
  }
  const role = (f.role as string | undefined) ?? "member";
  if (command === "create" && !["owner", "admin", "member"].includes(role)) throw new UsageError("--role must be owner, admin or member", USERS_USAGE);

  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const config = loadConfig(paths, env);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  let backend: Users | undefined;
  try {
    backend = await connect(paths, env, config);
    const target = wanted ? await resolve(backend, parsed.positionals[0]!) : undefined;
    switch (command as Command) {
      case "list": {
        const list = await backend.list();
        if (f.json) json({ users: list });
        else table(list, out);
        return 0;
      }
      case "create": {
        const made = await backend.create({ role: role as Role, email: f.email as string | undefined, display_name: f.name as string | undefined });
        if (f.json) json(made);
        else {
          out(`created ${made.user.role} ${made.user.user_id}${made.user.email ? ` (${made.user.email})` : ""}`);
          out(`token, shown only now: ${made.api_token}`);
        }
        return 0;
      }
      case "suspend":
      case "activate": {
        const u = await backend.update(target!.user_id, { status: command === "suspend" ? "suspended" : "active" });
        out(`${command === "suspend" ? "suspended" : "activated"} ${describe(u)}${command === "suspend" ? ": its tokens are refused from now on" : ""}`);
        return 0;
      }
      case "token": {
        const t = await backend.rotateToken(target!.user_id);
        if (f.json) json(t);
        else {
          out(`new token for ${describe(target!)}, shown only now: ${t.api_token}`);
          out("every older token of this user is refused from now on");
        }
        return 0;
      }
      case "delete": {
        if (!f.yes && !(await confirm(`Delete ${describe(target!)} and all their data (conversations, memory, jobs, files)?`))) {
          process.stderr.write(process.stdin.isTTY ? "service: nothing deleted\n" : "service: nothing deleted: pass --yes to delete without asking\n");
          return 1;
        }
        await backend.delete(target!.user_id);
        out(`deleted ${describe(target!)} and all their data`);
        return 0;
      }
    }
    return 2;
  } catch (e) {
    if (e instanceof Failure || e instanceof ServiceError) {
      process.stderr.write(`service: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    backend?.close();
  }
}

const describe = (u: UserRecord) => `${u.role} ${u.user_id}${u.email ? ` (${u.email})` : ""}`;

/** The running service's admin API when it runs for this home, else the database. */
async function connect(paths: Paths, env: Env, config: Config): Promise<Users> {
  const instance = await findInstance(paths, config);
  if (instance?.url) {
    const token = configuredInstanceToken(env, config, paths)?.token;
    if (!token) {
      throw new Failure(
        `the service runs at ${instance.url}, but its instance token is not at hand: set SERVICE_REBORN_WEBUI_TOKEN (or GATEWAY_AUTH_TOKEN) as serve has it`,
      );
    }
    return overHttp(instance.url, token);
  }
  const database = await openDatabase(databaseUrl(config, paths), config.database.authToken);
  const admin = new UserAdmin({ db: database.db, home: paths.home });
  const owner = { role: "owner" as const };
  return {
    list: () => admin.list(),
    create: (input) => admin.create(owner, input),
    update: (id, patch) => admin.update(owner, id, patch),
    rotateToken: (id) => admin.rotateToken(owner, id),
    delete: (id) => admin.delete(owner, id),
    close: () => database.close(),
  };
}

function overHttp(url: string, token: string): Users {
  const client = new ChatClient({ baseUrl: url, token, fetch: (u, init) => fetch(u, { ...init, signal: AbortSignal.timeout(30_000) }) });
  const base = "/api/webchat/v2/admin/users";
  const call = async <Reply extends TSchema>(method: string, path = "", body?: unknown): Promise<Static<Reply>> => {
    try {
      return await client.request<Reply>(method, base + path, body);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) throw new Failure(`the service at ${url} refused the instance token: is it the one serve uses?`);
      if (e instanceof ConnectionError) throw new Failure(`cannot reach the service at ${url}: ${String((e.cause as Error)?.message ?? e.message)}`);
      throw e instanceof ApiError ? new Failure(e.message) : e;
    }
  };
  return {
    list: async () => (await call<typeof UserList>("GET")).users,
    create: (input) => call<typeof CreatedUser>("POST", "", input),
    update: (id, patch) => call<typeof UserRecord>("PATCH", `/${encodeURIComponent(id)}`, patch),
    rotateToken: (id) => call<typeof NewToken>("POST", `/${encodeURIComponent(id)}/token`),
    delete: async (id) => void (await call<TUndefined>("DELETE", `/${encodeURIComponent(id)}`)),
    close: () => {},
  };
}

/** A user by id, or by email address when no id matches. */
async function resolve(backend: Users, ref: string): Promise<UserRecord> {
  const all = await backend.list();
  const byId = all.find((u) => u.user_id === ref);
  if (byId) return byId;
  const byEmail = all.filter((u) => u.email && u.email.toLowerCase() === ref.toLowerCase());
  if (byEmail.length === 1) return byEmail[0]!;
  if (byEmail.length > 1) throw new Failure(`${byEmail.length} users have the email ${ref}: name one by its id (service users list)`);
  throw new Failure(`no user with the id or email ${ref} (service users list shows them)`);
}

function table(list: UserRecord[], out: (line: string) => void): void {
  const rows = [
    ["USER", "ROLE", "STATUS", "EMAIL", "NAME", "SIGN-IN", "CREATED"],
    ...list.map((u) => [
      u.user_id,
      u.role,
      u.status,
      u.email ?? "-",
      u.display_name ?? "-",
      u.sign_in.join(",") || "-",
      u.created_at.slice(0, 16).replace("T", " "),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) out(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}

/** Asks on a terminal; without one the answer is no (pass --yes). */
async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const p = await import("@clack/prompts");
  const answer = await p.confirm({ message: question, initialValue: false });
  return answer === true;
}
