import { configuredInstanceToken, loadConfig, servicePaths, type Env } from "../config/load";
import type { Decision } from "../gateway/chat-wire";
import { ApiError, ChatClient, ConnectionError } from "../client/http";
import { parseSubcommand, UsageError } from "./args";
import { findInstance } from "./instance";

export const APPROVALS_USAGE = `Usage: service approvals <command> [options]

The tool calls waiting for a decision, and the decision, through the running service
(\`service serve\`), as the instance owner (or as the user whose --token is given): what the
web UI's approval prompts and the TUI's do, for a script or a terminal without either. A
webhook job waiting on an approval runs on once it is decided.

Commands:
  list                      every call waiting: its conversation, tool, arguments, and where
                            its data would go or the change it would make
  approve <thread-id>       run the call the conversation waits on
  deny <thread-id>          refuse it (the model is told)
  always <thread-id>        run it, and from now on the same tool (or, for a call that could
                            send data out, the same destination) without asking

Options:
  --json                    print JSON
  --token TOKEN             act as this user (default: the instance token)
  --home DIR                service home (default: $SERVICE_HOME or ~/.service)
  -h, --help                this text
`;

const COMMANDS = ["list", "approve", "deny", "always"] as const;
type Command = (typeof COMMANDS)[number];

class Failure extends Error {}

export async function approvals(argv: string[]): Promise<number> {
  const parsed = parseSubcommand(argv, "approvals", APPROVALS_USAGE, (command) =>
    COMMANDS.includes(command as Command) ? { json: { type: "boolean" }, home: { type: "string" }, token: { type: "string" } } : undefined,
  );
  if (!parsed) return 0;
  const { flags: f, positionals } = parsed;
  const command = parsed.command as Command;
  const wanted = command === "list" ? 0 : 1;
  if (positionals.length !== wanted) throw new UsageError(wanted ? `${command} takes one conversation (thread) id` : "list takes no arguments", APPROVALS_USAGE);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const api = await connect(f.home as string | undefined, f.token as string | undefined);
    if (command === "list") {
      const waiting = await api.approvals();
      if (f.json) out(JSON.stringify({ approvals: waiting }, null, 2));
      else if (!waiting.length) out("nothing waits for a decision");
      else
        for (const a of waiting) {
          out(`${a.thread_id}  ${a.tool} ${a.arguments}${a.thread_title ? `  (${a.thread_title})` : ""}`);
          if (a.destination) out(`  could send data to ${a.destination}`);
          if (a.diff) out(`  ${a.diff.replace(/\n/g, "\n  ")}`);
        }
      return 0;
    }
    const result = await api.decide(positionals[0]!, command as Decision);
    if (f.json) out(JSON.stringify(result, null, 2));
    else out(`${command === "deny" ? "denied" : command === "always" ? "always allowed" : "approved"}; the conversation goes on`);
    return 0;
  } catch (e) {
    if (e instanceof Failure || e instanceof ApiError) {
      process.stderr.write(`service: ${e instanceof ConnectionError ? `cannot reach the service: ${e.message}` : e.message}\n`);
      return 1;
    }
    throw e;
  }
}

/** The running service of this home, with the instance token (or the one given). */
async function connect(home: string | undefined, token: string | undefined): Promise<ChatClient> {
  const env: Env = { ...process.env, ...(home ? { SERVICE_HOME: home } : {}) };
  const paths = servicePaths(env);
  const config = loadConfig(paths, env);
  const instance = await findInstance(paths, config);
  if (!instance?.url) throw new Failure("the service is not running for this home: approvals are decided inside it (start it with service serve)");
  const bearer = token ?? configuredInstanceToken(env, config, paths)?.token;
  if (!bearer) throw new Failure(`the service runs at ${instance.url}, but its instance token is not at hand: pass --token or set SERVICE_REBORN_WEBUI_TOKEN`);
  return new ChatClient({ baseUrl: instance.url, token: bearer, fetch: (u, init) => fetch(u, { ...init, signal: AbortSignal.timeout(120_000) }) });
}
