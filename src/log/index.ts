// The service's log: one line per record, as JSON (`LOG_FORMAT=json`: `ts`, `level`, `msg` and
// the record's fields) or as text for people (`pretty`). A module takes the service's Logger
// as `log.child({ component })`, so each of its records says where it comes from.
import { inspect } from "node:util";

export type Level = "debug" | "info" | "warn" | "error";
export type Fields = Record<string, unknown>;
export type LogFormat = "json" | "pretty";

export interface Logger {
  /** An info record (prefer `info`: the level is then on the page). */
  (message: string, fields?: Fields): void;
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** Every line is passed through this before it is written (the service's secrets go). */
  redactWith(redact: (text: string) => string): void;
  /** The same log, with `fields` (a `component`: "mcp", "memory", "jobs") in each of its records. */
  child(fields: Fields): Logger;
}

const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  format: LogFormat;
  level?: Level;
  /** Where lines go (without the newline); stdout by default. */
  write?: (line: string) => void;
  now?: () => Date;
}

export function createLogger(o: LoggerOptions): Logger {
  const min = RANK[o.level ?? "info"];
  const write = o.write ?? stdoutLine;
  const now = o.now ?? (() => new Date());
  let redact = (text: string) => text;
  const record = (level: Level, msg: string, fields?: Fields) => {
    if (RANK[level] < min) return;
    let line: string;
    try {
      // each value is redacted before it is serialised, so escaping never hides a secret
      const clean = fields && (scrub(fields, redact) as Fields);
      line = o.format === "json" ? jsonLine(now(), level, redact(msg), clean) : prettyLine({ ts: now(), level }, redact(msg), clean);
    } catch (e) {
      line = `${level} ${redact(msg)} (fields could not be written: ${(e as Error).message})`;
    }
    try {
      write(line);
    } catch {
      // a log line that cannot be written never takes the service down
    }
  };
  const logger = (base?: Fields): Logger => {
    const at = (level: Level) => (msg: string, fields?: Fields) => record(level, msg, base ? { ...base, ...fields } : fields);
    const log = at("info") as Logger;
    log.debug = at("debug");
    log.info = at("info");
    log.warn = at("warn");
    log.error = at("error");
    log.redactWith = (fn) => void (redact = fn);
    log.child = (fields) => logger({ ...base, ...fields });
    return log;
  };
  return logger();
}

/** A log that writes nothing: for a module used without the service around it (onboarding, a test). */
export const noLog: Logger = createLogger({ format: "json", level: "error", write: () => {} });

/** Every string in `v` redacted; errors become their message. */
function scrub(v: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (typeof v === "string") return redact(v);
  if (v instanceof Error) return redact(v.message);
  if (v === null || typeof v !== "object" || depth > 4) return v;
  if (Array.isArray(v)) return v.map((x) => scrub(x, redact, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x, redact, depth + 1)]));
}

function jsonLine(ts: Date, level: Level, msg: string, fields: Fields = {}): string {
  const out: Fields = { ts: ts.toISOString(), level, msg };
  for (const [k, v] of Object.entries(fields)) if (!(k in out)) out[k] = v;
  return JSON.stringify(out);
}

function prettyLine(head: { ts: Date; level: Level } | undefined, msg: string, fields?: Fields): string {
  const parts = head ? [head.ts.toISOString(), head.level.toUpperCase().padEnd(5), msg] : [msg];
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) parts.push(`${k}=${prettyValue(v)}`);
  return parts.join(" ");
}

function prettyValue(v: unknown): string {
  if (typeof v === "string") return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== "object") return String(v);
  return inspect(v, { breakLength: Infinity, depth: 3 });
}

// stdout may be a pipe that closed (`service serve | head -1`): errors on it are dropped, not thrown.
let stdoutBroken = false;

/** After this, a closed stdout or stderr (EPIPE) stops the output instead of the process. */
export function guardStdio(): void {
  process.stdout.on("error", () => void (stdoutBroken = true));
  process.stderr.on("error", () => {});
}
function stdoutLine(line: string): void {
  if (stdoutBroken) return;
  try {
    process.stdout.write(`${line}\n`);
  } catch {
    stdoutBroken = true;
  }
}

/** The one line per turn: ids, channel, status, duration, tokens and, when it failed, the error code. */
export function logTurn(
  log: Logger | undefined,
  r: { id: string; threadId: string; status: string; error: { code: string } | null; usage: { inputTokens: number; outputTokens: number } },
  req: { userId: string; channel: string },
  /** When the turn started, ms since the epoch. */
  startedAt: number,
): void {
  log?.[r.error ? "warn" : "info"]("turn", {
    response_id: r.id,
    thread_id: r.threadId,
    user_id: req.userId,
    channel: req.channel,
    status: r.status,
    duration_ms: Date.now() - startedAt,
    input_tokens: r.usage.inputTokens,
    output_tokens: r.usage.outputTokens,
    ...(r.error ? { error_code: r.error.code } : {}),
  });
}
