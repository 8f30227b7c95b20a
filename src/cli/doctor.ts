import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { databaseUrl, envLayer, mergeLayers, readConfigFile, servicePaths, validateConfig, type Env, type Paths } from "../config/load";
import type { Config, ConfigLayer } from "../config/schema";
import { webhookConfigProblem } from "../channels/webhook/settings";
import { didYouMean, unknownKeys } from "../config/unknown-keys";
import { openAiLlm } from "../llm/openai";
import { DEFAULT_CONTEXT_WINDOW } from "../llm/window";
import { readServerWindow } from "../llm/window-servers";
import { schemaState, shownUrl } from "../store/db";
import { parseFlags } from "./args";
import { toolChecks } from "./doctor-tools";
import { ssoChecks } from "../auth/sso/doctor";
import { findInstance, type Instance } from "./instance";
import { webhookExposure } from "./exposure";

export const DOCTOR_USAGE = `Usage: service doctor [options]

Checks what the service needs, one line each: the service home, the configuration, the
database, the LLM endpoint, the ports, each MCP server (started, its tools listed, stopped),
the tool patterns of config.json, each sign-in provider (its discovery document) and the
systemd user unit. Exit code 1 when something is wrong ("fail"); warnings alone leave it 0.

Options:
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text
`;

/** The systemd user unit `service doctor` looks for (docs/service.service is a template). */
export const UNIT_NAME = "service.service";

type Verdict = "ok" | "warn" | "fail" | "skip";
export interface Check {
  verdict: Verdict;
  what: string;
  detail: string;
}

export async function doctor(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { home: { type: "string" } }, DOCTOR_USAGE);
  if (f.help) {
    process.stdout.write(DOCTOR_USAGE);
    return 0;
  }
  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const checks: Check[] = [home(paths)];
  const config = configCheck(paths, env, checks);
  if (config) {
    checks.push(await database(config, paths));
    checks.push(await llm(config));
    checks.push(await contextWindow(config));
    const instance = await findInstance(paths, config);
    checks.push(await port("gateway port", config.gateway.host, config.gateway.port, instance, instance?.url, config.gateway.enabled));
    checks.push(await port("webhook port", config.http.host, config.http.port, instance, instance?.record?.webhook_url, config.http.enabled));
    const exposed = webhookExposure(config);
    if (exposed) checks.push({ verdict: "warn", what: "webhook host", detail: exposed });
    checks.push(...(await toolChecks(config, paths)));
    checks.push(...(await ssoChecks(config)));
  }
  checks.push(systemdUnit(paths, env));
  for (const c of checks) process.stdout.write(`${c.verdict.padEnd(4)}  ${c.what.padEnd(12)}  ${c.detail}\n`);
  const failed = checks.filter((c) => c.verdict === "fail").length;
  if (failed) process.stdout.write(`${failed} check(s) failed\n`);
  return failed ? 1 : 0;
}

function home(paths: Paths): Check {
  const what = "home";
  if (!existsSync(paths.home)) return { verdict: "warn", what, detail: `${paths.home} does not exist yet: run \`service onboard\` (serve would create it from defaults)` };
  const st = statSync(paths.home);
  if (!st.isDirectory()) return { verdict: "fail", what, detail: `${paths.home} is not a directory` };
  try {
    accessSync(paths.home, constants.W_OK);
  } catch {
    return { verdict: "fail", what, detail: `${paths.home} is not writable by this user` };
  }
  const problems: string[] = [];
  if ((st.mode & 0o077) !== 0) problems.push(`mode ${(st.mode & 0o777).toString(8)} lets others in (chmod 700 ${paths.home})`);
  if (existsSync(paths.token) && (statSync(paths.token).mode & 0o077) !== 0) problems.push(`webui-token is readable by others (chmod 600 ${paths.token})`);
  if (problems.length) return { verdict: "warn", what, detail: `${paths.home}: ${problems.join("; ")}` };
  return { verdict: "ok", what, detail: `${paths.home} (mode 0700)${existsSync(paths.token) ? ", webui-token present" : ", no webui-token (serve generates a token per run)"}` };
}

function configCheck(paths: Paths, env: Env, checks: Check[]): Config | undefined {
  const what = "config";
  let config: Config;
  let file: ConfigLayer;
  try {
    file = readConfigFile(paths);
    config = validateConfig(mergeLayers(file, envLayer(env)));
  } catch (e) {
    checks.push({ verdict: "fail", what, detail: (e as Error).message });
    return undefined;
  }
  const source = existsSync(paths.config) ? paths.config : "no config.json: defaults and environment";
  const problem = webhookConfigProblem(config);
  if (problem) {
    checks.push({ verdict: "fail", what, detail: `${source}: ${problem}` });
  } else {
    const unknown = unknownKeys(file);
    checks.push(
      unknown.length
        ? {
            verdict: "warn",
            what,
            detail: `${source}: unknown key(s) ignored: ${unknown.map((k) => `"${k.path}"${didYouMean(k)}`).join(", ")}`,
          }
        : { verdict: "ok", what, detail: source },
    );
  }
  return config;
}

async function database(config: Config, paths: Paths): Promise<Check> {
  const what = "database";
  const url = databaseUrl(config, paths);
  const file = url.startsWith("file:") ? url.slice(5) : undefined;
  if (file && !existsSync(file)) return { verdict: "warn", what, detail: `${url} does not exist yet (serve or onboard creates it)` };
  const shown = shownUrl(url);
  try {
    const state = await schemaState(url, config.database.authToken);
    if (!state) return { verdict: "warn", what, detail: `${shown}: empty (serve sets it up when it starts)` };
    const { applied, known, users } = state;
    if (applied > known) return { verdict: "fail", what, detail: `${shown}: written by a newer version (${applied} migrations; this binary knows ${known})` };
    if (applied < known) return { verdict: "warn", what, detail: `${shown}: ${known - applied} migration(s) to apply; serve applies them when it starts` };
    return { verdict: "ok", what, detail: `${shown}: schema up to date, ${users} user(s)` };
  } catch (e) {
    return { verdict: "fail", what, detail: `${shown}: ${(e as Error).message}` };
  }
}

async function llm(config: Config): Promise<Check> {
  const what = "llm";
  const { baseUrl, apiKey, model } = config.llm;
  if (!model || !(baseUrl || apiKey)) {
    return { verdict: "fail", what, detail: "no LLM configured: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL, or run `service onboard`" };
  }
  const where = baseUrl ?? "the OpenAI API";
  try {
    const models = await openAiLlm({ baseUrl, apiKey, model }).listModels(AbortSignal.timeout(5_000));
    if (models.length && !models.includes(model)) {
      return { verdict: "warn", what, detail: `${where} answers, but does not list the model ${model} (it lists ${models.slice(0, 5).join(", ")}${models.length > 5 ? ", …" : ""})` };
    }
    return { verdict: "ok", what, detail: `${model} at ${where}` };
  } catch (e) {
    return { verdict: "fail", what, detail: `${where} did not answer GET /models: ${(e as Error).message}` };
  }
}

/** The window requests are made to fit, and where it comes from; a configured one larger than the server's is a warning. */
async function contextWindow(config: Config): Promise<Check> {
  const what = "context";
  const { baseUrl, apiKey, model, contextWindow: configured } = config.llm;
  if (!model || !(baseUrl || apiKey)) return { verdict: "skip", what, detail: "no LLM configured" };
  const found = baseUrl ? await readServerWindow({ baseUrl, apiKey, model }, AbortSignal.timeout(6_000), 3_000).catch(() => undefined) : undefined;
  if (configured !== undefined) {
    if (found && found.tokens < configured) {
      return {
        verdict: "warn",
        what,
        detail: `context window ${configured} tokens (config), but the server gives ${found.tokens} (${found.from}): longer prompts are cut or refused; set LLM_CONTEXT_WINDOW=${found.tokens} or give the model a larger context`,
      };
    }
    return { verdict: "ok", what, detail: `context window ${configured} tokens (config)` };
  }
  if (found) return { verdict: "ok", what, detail: `context window ${found.tokens} tokens (${found.from})` };
  return {
    verdict: baseUrl ? "warn" : "ok",
    what,
    detail: `context window ${DEFAULT_CONTEXT_WINDOW} tokens (default)${baseUrl ? `: ${baseUrl} does not say which window it gives ${model}; set LLM_CONTEXT_WINDOW` : ""}`,
  };
}

async function port(what: string, host: string, portNumber: number, instance: Instance | undefined, runningUrl: string | null | undefined, enabled: boolean): Promise<Check> {
  if (!enabled) return { verdict: "skip", what, detail: what.startsWith("webhook") ? "webhook channel off (HTTP_ENABLED)" : "gateway off (GATEWAY_ENABLED)" };
  if (portNumber === 0) return { verdict: "ok", what, detail: `${host}:0: a free port is picked at start` };
  if (instance && runningUrl && new URL(runningUrl).port === String(portNumber)) {
    return { verdict: "ok", what, detail: `${host}:${portNumber} in use by this service${instance.record ? ` (pid ${instance.record.pid})` : ""}` };
  }
  const problem = await bindProblem(host, portNumber);
  if (!problem) return { verdict: "ok", what, detail: `${host}:${portNumber} free` };
  if (problem === "EADDRINUSE") return { verdict: "fail", what, detail: `${host}:${portNumber} is in use by another program: serve could not start` };
  if (problem === "EACCES") return { verdict: "fail", what, detail: `${host}:${portNumber} needs privileges this user does not have` };
  return { verdict: "fail", what, detail: `cannot listen on ${host}:${portNumber}: ${problem}` };
}

/** Undefined when the address can be bound (and it is released at once), else the error code. */
function bindProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
}

/** The user unit, if one is installed: its ExecStart must run an existing `service serve` for this home. */
function systemdUnit(paths: Paths, env: Env): Check {
  const what = "systemd";
  const home = env.HOME || homedir();
  const unit = join(env.XDG_CONFIG_HOME || join(home, ".config"), "systemd", "user", UNIT_NAME);
  if (!existsSync(unit)) return { verdict: "skip", what, detail: `no user unit at ${unit} (optional: see docs/${UNIT_NAME})` };
  const text = readFileSync(unit, "utf8");
  // %h is the user's home in a user unit
  const expand = (s: string) => s.replace(/%h/g, home).trim();
  const exec = /^\s*ExecStart\s*=\s*(.+)$/m.exec(text)?.[1];
  if (!exec) return { verdict: "fail", what, detail: `${unit} has no ExecStart` };
  const [binary, ...args] = expand(exec).replace(/^[-@:+!]+/, "").split(/\s+/);
  if (!binary || !existsSync(binary)) return { verdict: "fail", what, detail: `${unit}: ExecStart runs ${binary}, which does not exist (install.sh puts it in ~/.local/bin)` };
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    return { verdict: "fail", what, detail: `${unit}: ${binary} is not executable` };
  }
  if (!args.includes("serve")) return { verdict: "fail", what, detail: `${unit}: ExecStart must run \`${binary} serve\`` };
  const unitHome = /^\s*Environment\s*=\s*"?SERVICE_HOME=([^"\n]+)"?\s*$/m.exec(text)?.[1];
  const runsHome = unitHome ? expand(unitHome) : join(home, ".service");
  if (runsHome !== paths.home) return { verdict: "warn", what, detail: `${unit} runs the home ${runsHome}, not ${paths.home}` };
  return { verdict: "ok", what, detail: `${unit} runs ${binary} serve` };
}
