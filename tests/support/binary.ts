// The compiled binary, as the end-to-end tests start it: built if it is missing, run from a
// directory of the test's own, ready once its output says so (never after a sleep).
import { spawn, type Subprocess } from "bun";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { onPostgres, postgresOf } from "./postgres";

export const root = resolve(import.meta.dir, "../..");
export const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");

/** Builds dist/service when it is not there yet. */
export function ensureBinary(): void {
  if (existsSync(BIN)) return;
  const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (build.exitCode !== 0) throw new Error("bun run build failed");
}

export interface Served<M> {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** What `ready` found in the output. */
  ready: M;
  /** All of stdout so far (it keeps being read, so the process never blocks on a full pipe). */
  output(): string;
}

/**
 * Runs `bin args` and resolves once `ready` finds what it looks for in stdout; throws with
 * the output when the process ends first.
 */
export async function serveUntil<M>(
  args: string[],
  opts: { cwd: string; env: Record<string, string>; bin?: string },
  ready: (out: string) => M | undefined,
): Promise<Served<M>> {
  // TEST_DATABASE=postgres: the home's database is on the throwaway cluster
  const env = onPostgres && opts.env.SERVICE_HOME && !opts.env.DATABASE_URL ? { ...opts.env, DATABASE_URL: await postgresOf(opts.env.SERVICE_HOME) } : opts.env;
  const proc = spawn([opts.bin ?? BIN, ...args], { cwd: opts.cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" }) as Subprocess<"ignore", "pipe", "pipe">;
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${args.join(" ")} exited early: ${out}\n${await new Response(proc.stderr).text()}`);
    out += decoder.decode(value, { stream: true });
    const found = ready(out);
    if (found !== undefined) {
      void (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          out += decoder.decode(value, { stream: true });
        }
      })();
      return { proc, ready: found, output: () => out };
    }
  }
}

/** The gateway's URL from serve's first line. */
export const listeningUrl = (out: string) => /listening on (http:\/\/\S+)/.exec(out)?.[1];

/** The webhook channel's base URL from serve's start-up lines. */
export const webhookUrl = (out: string) => /webhook channel: (http:\/\/\S+)\/webhook/.exec(out)?.[1];

/**
 * The environment of a `serve` a test starts: its home under `dir`, the instance token, the
 * scripted LLM, ports the system picks on loopback and no terminal UI; with `webhookSecret`,
 * the webhook channel too. `extra` adds or overrides variables.
 */
export function serveEnv(
  o: { dir: string; home: string; token: string; llmUrl: string; model?: string; webhookSecret?: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: o.dir,
    SERVICE_HOME: o.home,
    SERVICE_REBORN_WEBUI_TOKEN: o.token,
    LLM_BASE_URL: o.llmUrl,
    LLM_API_KEY: "k",
    LLM_MODEL: o.model ?? "scripted-model",
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    CLI_ENABLED: "false",
    ...(o.webhookSecret ? { HTTP_ENABLED: "true", HTTP_HOST: "127.0.0.1", HTTP_PORT: "0", HTTP_WEBHOOK_SECRET: o.webhookSecret } : {}),
    ...extra,
  };
}
