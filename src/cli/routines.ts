import { configuredInstanceToken, loadConfig, servicePaths, type Env } from "../config/load";
import { ApiError, ChatClient, ConnectionError } from "../client/http";
import { RoutinesClient, runLine } from "../client/routines";
import type { RoutineCreate, RoutineRecord } from "../routines/wire";
import { parseSubcommand, UsageError } from "./args";
import { findInstance } from "./instance";

export const ROUTINES_USAGE = `Usage: service routines <command> [options]

Manages routines, scheduled agent runs, through the running service (\`service serve\`),
as the instance owner (or as the user whose --token is given).

Commands:
  list                         every routine: id, state, schedule, next run, name
  add --schedule S --prompt P  a new routine; also --name N, --timezone TZ,
                               --conversation new|same, --catch-up skip|one|all,
                               --callback-url URL, --paused
  show <id>                    one routine: its schedule in words, next three runs, last run
  runs <id> [--limit N]        its runs, newest first, with their answers
  pause <id>, resume <id>      stop and restart its ticks (ticks while paused are not recorded)
  run <id>                     run it now, whatever its schedule
  delete <id>                  delete it and its run history

A schedule is a 5-field cron expression ("0 7 * * 1-5", "@daily"), "every <n>s|m|h|d",
or "at <ISO 8601 time>".

Options:
  --json                       print JSON
  --token TOKEN                act as this user (default: the instance token)
  --home DIR                   service home (default: $SERVICE_HOME or ~/.service)
  -h, --help                   this text
`;

const COMMANDS = ["list", "add", "show", "runs", "pause", "resume", "run", "delete"] as const;
type Command = (typeof COMMANDS)[number];

class Failure extends Error {}

export async function routines(argv: string[]): Promise<number> {
  const parsed = parseSubcommand(argv, "routines", ROUTINES_USAGE, (command) =>
    COMMANDS.includes(command as Command)
      ? {
          json: { type: "boolean" },
          home: { type: "string" },
          token: { type: "string" },
          ...(command === "add"
            ? {
                schedule: { type: "string" },
                prompt: { type: "string" },
                name: { type: "string" },
                timezone: { type: "string" },
                conversation: { type: "string" },
                "catch-up": { type: "string" },
                "callback-url": { type: "string" },
                paused: { type: "boolean" },
              }
            : {}),
          ...(command === "runs" ? { limit: { type: "string" } } : {}),
        }
      : undefined,
  );
  if (!parsed) return 0;
  const { flags: f, positionals } = parsed;
  const command = parsed.command as Command;
  const wanted = command === "list" || command === "add" ? 0 : 1;
  if (positionals.length !== wanted) throw new UsageError(wanted ? `${command} takes one routine id` : `${command} takes no arguments`, ROUTINES_USAGE);
  if (command === "add" && (!f.schedule || !f.prompt)) throw new UsageError("add needs --schedule and --prompt", ROUTINES_USAGE);
  const id = positionals[0]!;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  try {
    const api = await connect(f.home as string | undefined, f.token as string | undefined);
    switch (command) {
      case "list": {
        const list = await api.list();
        if (f.json) json({ routines: list });
        else if (!list.length) out("no routines (service routines add --schedule … --prompt …)");
        else table(list, out);
        return 0;
      }
      case "add": {
        const body: RoutineCreate = { schedule: f.schedule as string, prompt: f.prompt as string };
        if (f.name) body.name = f.name as string;
        if (f.timezone) body.timezone = f.timezone as string;
        if (f.conversation) body.conversation = f.conversation as RoutineCreate["conversation"];
        if (f["catch-up"]) body.catch_up = f["catch-up"] as RoutineCreate["catch_up"];
        if (f["callback-url"]) body.callback_url = f["callback-url"] as string;
        if (f.paused) body.enabled = false;
        const r = await api.create(body);
        if (f.json) json(r);
        else show(r, out);
        return 0;
      }
      case "show": {
        const r = await api.get(id);
        if (f.json) json(r);
        else show(r, out);
        return 0;
      }
      case "runs": {
        const limit = f.limit === undefined ? 20 : Number(f.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError("--limit must be an integer from 1 to 100", ROUTINES_USAGE);
        const runs = await api.runs(id, limit);
        if (f.json) json({ runs });
        else if (!runs.length) out("no runs yet");
        else
          for (const r of runs) {
            out(runLine(r));
            if (r.response) out(`  ${r.response.replace(/\n/g, "\n  ")}`);
          }
        return 0;
      }
      case "pause":
      case "resume": {
        const r = await api.update(id, { enabled: command === "resume" });
        out(`${command === "pause" ? "paused" : "resumed"} ${r.name}${r.next_run_at ? `; next run ${r.next_run_at}` : ""}`);
        return 0;
      }
      case "run": {
        const run = await api.run(id);
        if (f.json) json({ run });
        else out(`running now: job ${run.job_id} (service routines runs ${id})`);
        return 0;
      }
      case "delete": {
        await api.remove(id);
        out(`deleted routine ${id}`);
        return 0;
      }
    }
    return 2;
  } catch (e) {
    if (e instanceof Failure || e instanceof ApiError) {
      process.stderr.write(`service: ${e instanceof ConnectionError ? `cannot reach the service: ${e.message}` : e.message}\n`);
      return 1;
    }
    throw e;
  }
}

/** The running service of this home, with the instance token (or the one given). */
async function connect(home: string | undefined, token: string | undefined): Promise<RoutinesClient> {
  const env: Env = { ...process.env, ...(home ? { SERVICE_HOME: home } : {}) };
  const paths = servicePaths(env);
  const config = loadConfig(paths, env);
  const instance = await findInstance(paths, config);
  if (!instance?.url) throw new Failure("the service is not running for this home: routines run inside it (start it with service serve)");
  const bearer = token ?? configuredInstanceToken(env, config, paths)?.token;
  if (!bearer) throw new Failure(`the service runs at ${instance.url}, but its instance token is not at hand: pass --token or set SERVICE_REBORN_WEBUI_TOKEN`);
  return new RoutinesClient(new ChatClient({ baseUrl: instance.url, token: bearer, fetch: (u, init) => fetch(u, { ...init, signal: AbortSignal.timeout(30_000) }) }));
}

function show(r: RoutineRecord, out: (line: string) => void): void {
  out(`${r.name}  (${r.id})`);
  out(`  schedule:  ${r.schedule}: ${r.description}`);
  out(`  state:     ${r.enabled ? "active" : "paused"}; conversation ${r.conversation}; catch-up ${r.catch_up}${r.callback_url ? `; callback ${r.callback_url}` : ""}`);
  out(`  next runs: ${r.next_runs.length ? r.next_runs.join(", ") : "none"}`);
  out(`  last run:  ${r.last_run ? runLine(r.last_run) : "none yet"}`);
  out(`  prompt:    ${r.prompt.replace(/\n/g, "\n             ")}`);
}

function table(list: RoutineRecord[], out: (line: string) => void): void {
  const rows = [
    ["ID", "STATE", "SCHEDULE", "NEXT RUN", "NAME"],
    ...list.map((r) => [r.id, r.enabled ? (r.next_run_at ? "active" : "done") : "paused", r.schedule, r.next_run_at?.slice(0, 16).replace("T", " ") ?? "-", r.name]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((x) => x[i]!.length)));
  for (const x of rows) out(x.map((cell, i) => (i === x.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}
