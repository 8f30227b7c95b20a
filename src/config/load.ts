import { schemaProblems } from "../schema-problems";
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ConfigError, StartupError } from "../errors";
import { mcpServersProblem } from "./mcp";
import { ConfigSchema, DEFAULTS, type Config, type ConfigLayer } from "./schema";

export type Env = Record<string, string | undefined>;

export interface Paths {
  home: string;
  config: string;
  token: string;
  database: string;
}

/** A user's files folder in the home; undefined for an id that could not name one safely. */
export function userFilesDir(home: string, userId: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(userId) ? join(home, "files", userId) : undefined;
}

export function servicePaths(env: Env = process.env): Paths {
  const home = env.SERVICE_HOME || join(homedir(), ".service");
  return {
    home,
    config: join(home, "config.json"),
    token: join(home, "webui-token"),
    database: join(home, "service.db"),
  };
}

/** Creates the service home with mode 0700 if it is missing. */
export function ensureHome(paths: Paths): void {
  if (!existsSync(paths.home)) mkdirSync(paths.home, { recursive: true, mode: 0o700 });
}

/** The service home, created if it is missing, that `serve` can write; else a StartupError (one line), not a stack trace. */
export function ensureWritableHome(paths: Paths): void {
  try {
    ensureHome(paths);
    accessSync(paths.home, constants.W_OK);
  } catch (e) {
    throw new StartupError(
      `the service home ${paths.home} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): it holds the database, the token and the users' files. Make it writable, or choose another with SERVICE_HOME or --home.`,
    );
  }
}

export function readConfigFile(paths: Paths): ConfigLayer {
  if (!existsSync(paths.config)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(paths.config, "utf8"));
  } catch (e) {
    throw new ConfigError(`${paths.config} is not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(`${paths.config} must hold a JSON object`);
  }
  return parsed as ConfigLayer;
}

export function writeConfigFile(paths: Paths, layer: ConfigLayer): void {
  ensureHome(paths);
  writeFileSync(paths.config, JSON.stringify(layer, null, 2) + "\n", { mode: 0o600 });
  chmodSync(paths.config, 0o600);
}

// Malformed numbers and booleans name the variable (an unknown boolean is never silently false).
const bool = (v: string | undefined, name: string) => {
  if (v === undefined || v === "") return undefined;
  const s = v.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off"].includes(s)) return false;
  throw new ConfigError(`${name} must be true or false, not '${v}'`);
};
const int = (v: string | undefined, name: string) => {
  if (v === undefined || v === "") return undefined;
  if (!/^\s*-?\d+\s*$/.test(v)) throw new ConfigError(`${name} must be an integer, not '${v}'`);
  return Number(v);
};
const num = (v: string | undefined, name: string) => {
  if (v === undefined || v === "") return undefined;
  if (!/^\s*\d+(\.\d+)?\s*$/.test(v)) throw new ConfigError(`${name} must be a number, not '${v}'`);
  return Number(v);
};
const str = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
/** A comma-separated list; unset or empty is no value (the other layers stand). */
const list = (v: string | undefined) => {
  const items = (v ?? "").split(",").map((x) => x.trim()).filter(Boolean);
  return items.length ? items : undefined;
};

const logFormat = (v: string | undefined) => {
  const s = str(v)?.trim().toLowerCase();
  if (s === undefined || s === "json" || s === "pretty") return s;
  throw new ConfigError(`LOG_FORMAT must be json or pretty, not '${v}'`);
};
const logLevel = (v: string | undefined) => {
  const s = str(v)?.trim().toLowerCase();
  if (s === undefined || s === "debug" || s === "info" || s === "warn" || s === "error") return s;
  throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, not '${v}'`);
};

export function envLayer(env: Env): ConfigLayer {
  return {
    llm: {
      baseUrl: str(env.LLM_BASE_URL) ?? str(env.OPENAI_BASE_URL),
      apiKey: str(env.LLM_API_KEY) ?? str(env.OPENAI_API_KEY),
      model: str(env.LLM_MODEL),
      maxRetries: int(env.LLM_MAX_RETRIES, "LLM_MAX_RETRIES"),
      maxConcurrent: int(env.LLM_MAX_CONCURRENT, "LLM_MAX_CONCURRENT"),
      contextWindow: int(env.LLM_CONTEXT_WINDOW, "LLM_CONTEXT_WINDOW"),
      maxOutputTokens: int(env.LLM_MAX_OUTPUT_TOKENS, "LLM_MAX_OUTPUT_TOKENS"),
      compactionModel: str(env.LLM_COMPACTION_MODEL),
      memoryFlush: bool(env.LLM_MEMORY_FLUSH, "LLM_MEMORY_FLUSH"),
    },
    database: { url: str(env.DATABASE_URL), authToken: str(env.DATABASE_AUTH_TOKEN) },
    budgets: { monthlyUsd: num(env.BUDGET_MONTHLY_USD, "BUDGET_MONTHLY_USD") },
    metrics: { enabled: bool(env.METRICS_ENABLED, "METRICS_ENABLED"), token: str(env.METRICS_TOKEN) },
    telemetry: { otlpEndpoint: str(env.OTEL_EXPORTER_OTLP_ENDPOINT), serviceName: str(env.OTEL_SERVICE_NAME) },
    gateway: {
      enabled: bool(env.GATEWAY_ENABLED, "GATEWAY_ENABLED"),
      host: str(env.GATEWAY_HOST),
      port: int(env.GATEWAY_PORT, "GATEWAY_PORT"),
      authToken: str(env.GATEWAY_AUTH_TOKEN),
    },
    cli: { enabled: bool(env.CLI_ENABLED, "CLI_ENABLED") },
    http: {
      enabled: bool(env.HTTP_ENABLED, "HTTP_ENABLED"),
      host: str(env.HTTP_HOST),
      port: int(env.HTTP_PORT, "HTTP_PORT"),
      webhookSecret: str(env.HTTP_WEBHOOK_SECRET),
      callbackAllowHosts: list(env.HTTP_CALLBACK_ALLOW_HOSTS),
      jobConcurrency: int(env.HTTP_JOB_CONCURRENCY, "HTTP_JOB_CONCURRENCY"),
      jobMaxAttempts: int(env.HTTP_JOB_MAX_ATTEMPTS, "HTTP_JOB_MAX_ATTEMPTS"),
      jobLeaseS: int(env.HTTP_JOB_LEASE_S, "HTTP_JOB_LEASE_S"),
    },
    responses: {
      revision: str(env.RESPONSES_API_REVISION)?.toUpperCase() as "A" | "B" | undefined,
      rateLimit: int(env.RESPONSES_RATE_LIMIT, "RESPONSES_RATE_LIMIT"),
      turnTimeoutS: int(env.RESPONSES_TURN_TIMEOUT_S, "RESPONSES_TURN_TIMEOUT_S"),
    },
    agent: { maxSteps: int(env.AGENT_MAX_STEPS, "AGENT_MAX_STEPS"), turnTimeoutS: int(env.TURN_TIMEOUT_S, "TURN_TIMEOUT_S"),
      shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS, "SHUTDOWN_GRACE_MS"),
    },
    mcp: { startWaitMs: int(env.MCP_START_WAIT_MS, "MCP_START_WAIT_MS") },
    log: { format: logFormat(env.LOG_FORMAT), level: logLevel(env.LOG_LEVEL) },
    memory: { embeddingModel: str(env.LLM_EMBEDDING_MODEL) },
    tools: {
      ask: list(env.TOOLS_ASK),
      web: {
        allowPrivate: bool(env.WEB_FETCH_ALLOW_PRIVATE, "WEB_FETCH_ALLOW_PRIVATE"),
        allowHosts: list(env.WEB_FETCH_ALLOW_HOSTS),
        searchUrl: str(env.WEB_SEARCH_URL),
      },
      egress: { allow: list(env.TOOLS_EGRESS_ALLOW) },
    },
  };
}

/** Layers later win; objects merge key by key; undefined values never override. */
export function mergeLayers(...layers: ConfigLayer[]): Config {
  const out = structuredClone(DEFAULTS) as Record<string, unknown>;
  for (const layer of layers) {
    for (const [section, values] of Object.entries(layer ?? {})) {
      if (!(section in out) || values === undefined) continue;
      if (isPlainObject(values) && isPlainObject(out[section])) deepMerge(out[section], values);
      // a section that is not an object (`"gateway": "x"`) is kept, for validation to name it
      else if (!isPlainObject(values)) out[section] = structuredClone(values);
    }
  }
  return out as unknown as Config;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (isPlainObject(value) && isPlainObject(target[key])) deepMerge(target[key] as Record<string, unknown>, value);
    else target[key] = structuredClone(value);
  }
}

export function validateConfig(config: Config): Config {
  const mcp = mcpServersProblem(config.mcpServers);
  if (mcp) throw new ConfigError(`invalid configuration: ${mcp}`);
  const problems = schemaProblems(ConfigSchema, config, 5);
  // named by JSON pointer (`/gateway/port`), as an operator finds the key in config.json
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.map((p) => `${p.pointer || "/"} ${p.says}`).join(" ")}`);
  return config;
}

/** defaults < config.json < environment < flags */
export function loadConfig(paths: Paths, env: Env, flags: ConfigLayer = {}): Config {
  return validateConfig(mergeLayers(readConfigFile(paths), envLayer(env), flags));
}

export function databaseUrl(config: Config, paths: Paths): string {
  return config.database.url ?? `file:${paths.database}`;
}

export type TokenSource = "SERVICE_REBORN_WEBUI_TOKEN" | "GATEWAY_AUTH_TOKEN" | "webui-token";

/**
 * The instance token as configured, for `serve` and its clients alike:
 * SERVICE_REBORN_WEBUI_TOKEN > GATEWAY_AUTH_TOKEN > the webui-token file.
 */
export function configuredInstanceToken(env: Env, config: Config, paths: Paths): { token: string; source: TokenSource } | undefined {
  if (env.SERVICE_REBORN_WEBUI_TOKEN) return { token: env.SERVICE_REBORN_WEBUI_TOKEN, source: "SERVICE_REBORN_WEBUI_TOKEN" };
  if (config.gateway.authToken) return { token: config.gateway.authToken, source: "GATEWAY_AUTH_TOKEN" };
  const file = existsSync(paths.token) ? readFileSync(paths.token, "utf8").trim() : "";
  return file ? { token: file, source: "webui-token" } : undefined;
}
