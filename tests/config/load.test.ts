// Configuration: defaults < config.json < environment < flags, validation errors, paths.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
  databaseUrl,
  ensureHome,
  loadConfig,
  readConfigFile,
  servicePaths,
  writeConfigFile,
  type Env,
} from "../../src/config/load";
import { DEFAULTS, responsesTurnTimeoutMs, type ConfigLayer } from "../../src/config/schema";
import { ConfigError } from "../../src/errors";

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "config-test-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh home; writes config.json when given (a string is written verbatim). */
function home(configJson?: unknown) {
  const dir = join(root, `home-${++n}`);
  mkdirSync(dir, { recursive: true });
  const paths = servicePaths({ SERVICE_HOME: dir });
  if (configJson !== undefined) {
    writeFileSync(paths.config, typeof configJson === "string" ? configJson : JSON.stringify(configJson));
  }
  return paths;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError, got none");
}

describe("servicePaths", () => {
  test("defaults to ~/.service", () => {
    const p = servicePaths({});
    expect(p.home).toBe(join(homedir(), ".service"));
    expect(p.config).toBe(join(homedir(), ".service", "config.json"));
    expect(p.token).toBe(join(homedir(), ".service", "webui-token"));
    expect(p.database).toBe(join(homedir(), ".service", "service.db"));
  });

  test("SERVICE_HOME moves everything; an empty one is ignored", () => {
    expect(servicePaths({ SERVICE_HOME: "/srv/x" })).toEqual({
      home: "/srv/x",
      config: "/srv/x/config.json",
      token: "/srv/x/webui-token",
      database: "/srv/x/service.db",
    });
    expect(servicePaths({ SERVICE_HOME: "" }).home).toBe(join(homedir(), ".service"));
  });

  test("the database defaults to a file in the home; DATABASE_URL overrides it", () => {
    const paths = home();
    expect(databaseUrl(loadConfig(paths, {}), paths)).toBe(`file:${paths.database}`);
    expect(databaseUrl(loadConfig(paths, { DATABASE_URL: "libsql://db.example.com" }), paths)).toBe("libsql://db.example.com");
  });

  test("ensureHome creates the home with mode 0700; writeConfigFile writes 0600", () => {
    const paths = servicePaths({ SERVICE_HOME: join(root, "fresh", "nested", "home") });
    ensureHome(paths);
    expect(statSync(paths.home).mode & 0o777).toBe(0o700);
    writeConfigFile(paths, { llm: { model: "m" } });
    expect(statSync(paths.config).mode & 0o777).toBe(0o600);
    expect(readConfigFile(paths)).toEqual({ llm: { model: "m" } });
  });
});

describe("layering", () => {
  test("no config.json, no env: the built-in defaults", () => {
    const config = loadConfig(home(), {});
    expect(config).toEqual(DEFAULTS);
    expect(config.gateway).toEqual({ enabled: true, host: "127.0.0.1", port: 3000 });
    expect(config.http).toEqual({ enabled: false, host: "0.0.0.0", port: 8080, callbackAllowHosts: [], jobConcurrency: 4, jobMaxAttempts: 3, jobLeaseS: 30, sources: {} });
    // no window: it is read from the LLM server at start (src/llm/window.ts), else 32768
    expect(config.llm).toEqual({ maxRetries: 3, maxConcurrent: 1024, fallbacks: [], maxOutputTokens: 4096, memoryFlush: true, prices: {} });
    expect("contextWindow" in config.llm).toBe(false);
    expect(config.agent).toEqual({ maxSteps: 16, turnTimeoutS: 600, shutdownGraceMs: 5_000 });
    expect(config.mcp).toEqual({ startWaitMs: 10_000 });
    expect(config.log).toEqual({ format: "pretty", level: "info" });
    expect(config.cli.enabled).toBe(true);
    expect(config.responses).toEqual({ revision: "B", rateLimit: 30 });
  });

  test("a missing home is not an error", () => {
    const paths = servicePaths({ SERVICE_HOME: join(root, "does-not-exist") });
    expect(loadConfig(paths, {})).toEqual(DEFAULTS);
  });

  test("config.json overrides defaults, key by key", () => {
    const config = loadConfig(home({ gateway: { port: 4000 }, llm: { model: "from-file", baseUrl: "http://file/v1" } }), {});
    expect(config.gateway).toEqual({ enabled: true, host: "127.0.0.1", port: 4000 });
    expect(config.llm).toEqual({ ...DEFAULTS.llm, model: "from-file", baseUrl: "http://file/v1" });
  });

  test("environment overrides config.json; config.json keys the env does not set survive", () => {
    const paths = home({ gateway: { port: 4000, host: "0.0.0.0" }, llm: { model: "from-file", apiKey: "file-key" } });
    const config = loadConfig(paths, { GATEWAY_PORT: "5000", LLM_MODEL: "from-env" });
    expect(config.gateway.port).toBe(5000);
    expect(config.gateway.host).toBe("0.0.0.0");
    expect(config.llm.model).toBe("from-env");
    expect(config.llm.apiKey).toBe("file-key");
  });

  test("flags override the environment", () => {
    const paths = home({ gateway: { port: 4000 }, responses: { revision: "A" } });
    const flags: ConfigLayer = { gateway: { port: 6000 }, responses: { revision: "B" } };
    const config = loadConfig(paths, { GATEWAY_PORT: "5000", RESPONSES_API_REVISION: "A" }, flags);
    expect(config.gateway.port).toBe(6000);
    expect(config.responses.revision).toBe("B");
  });

  test("undefined flags and empty env values never override", () => {
    const paths = home({ gateway: { port: 4000 }, llm: { model: "from-file" } });
    const config = loadConfig(paths, { GATEWAY_PORT: "", LLM_MODEL: "" }, { gateway: { port: undefined, host: undefined } });
    expect(config.gateway.port).toBe(4000);
    expect(config.gateway.host).toBe("127.0.0.1");
    expect(config.llm.model).toBe("from-file");
  });

  test("every documented environment variable is read", () => {
    const env: Env = {
      LLM_BASE_URL: "http://llm/v1",
      LLM_API_KEY: "k",
      LLM_MODEL: "m",
      DATABASE_URL: "libsql://x",
      DATABASE_AUTH_TOKEN: "dbt",
      GATEWAY_ENABLED: "false",
      GATEWAY_HOST: "0.0.0.0",
      GATEWAY_PORT: "0",
      GATEWAY_AUTH_TOKEN: "gw",
      CLI_ENABLED: "0",
      HTTP_ENABLED: "true",
      HTTP_HOST: "127.0.0.1",
      HTTP_PORT: "9090",
      HTTP_WEBHOOK_SECRET: "s",
      RESPONSES_API_REVISION: "a",
      RESPONSES_RATE_LIMIT: "0",
      RESPONSES_TURN_TIMEOUT_S: "300",
      AGENT_MAX_STEPS: "5",
      LLM_EMBEDDING_MODEL: "emb",
      TOOLS_ASK: "file_write, web_fetch",
      WEB_FETCH_ALLOW_PRIVATE: "true",
      WEB_SEARCH_URL: "http://searx",
      WEB_FETCH_ALLOW_HOSTS: "wiki.lan, nas.lan",
      TOOLS_EGRESS_ALLOW: "*.example.com, mcp:home",
      LLM_MAX_RETRIES: "5",
      LLM_MAX_CONCURRENT: "64",
      LLM_CONTEXT_WINDOW: "8192",
      LLM_MAX_OUTPUT_TOKENS: "1024",
      LLM_COMPACTION_MODEL: "small",
      LLM_MEMORY_FLUSH: "false",
      HTTP_CALLBACK_ALLOW_HOSTS: "nas.lan, 10.0.0.0/8",
      HTTP_JOB_CONCURRENCY: "2",
      HTTP_JOB_MAX_ATTEMPTS: "5",
      HTTP_JOB_LEASE_S: "12",
      TURN_TIMEOUT_S: "90",
      SHUTDOWN_GRACE_MS: "250",
      MCP_START_WAIT_MS: "2500",
      LOG_FORMAT: "JSON",
      LOG_LEVEL: "warn",
      BUDGET_MONTHLY_USD: "12.5",
      METRICS_ENABLED: "true",
      METRICS_TOKEN: "mt",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318",
      OTEL_SERVICE_NAME: "agent",
    };
    expect(loadConfig(home(), env)).toEqual({
      llm: {
        baseUrl: "http://llm/v1",
        apiKey: "k",
        model: "m",
        maxRetries: 5,
        maxConcurrent: 64,
        fallbacks: [],
        contextWindow: 8192,
        maxOutputTokens: 1024,
        compactionModel: "small",
        memoryFlush: false,
        prices: {},
      },
      budgets: { monthlyUsd: 12.5 },
      metrics: { enabled: true, token: "mt" },
      telemetry: { otlpEndpoint: "http://otel:4318", serviceName: "agent" },
      database: { url: "libsql://x", authToken: "dbt" },
      gateway: { enabled: false, host: "0.0.0.0", port: 0, authToken: "gw" },
      cli: { enabled: false },
      http: {
        enabled: true,
        host: "127.0.0.1",
        port: 9090,
        webhookSecret: "s",
        callbackAllowHosts: ["nas.lan", "10.0.0.0/8"],
        jobConcurrency: 2,
        jobMaxAttempts: 5,
        jobLeaseS: 12,
        sources: {},
      },
      responses: { revision: "A", rateLimit: 0, turnTimeoutS: 300 },
      agent: { maxSteps: 5, turnTimeoutS: 90, shutdownGraceMs: 250 },
      mcp: { startWaitMs: 2500 },
      log: { format: "json", level: "warn" },
      memory: { embeddingModel: "emb" },
      tools: {
        approval: {},
        ask: ["file_write", "web_fetch"],
        web: { allowPrivate: true, allowHosts: ["wiki.lan", "nas.lan"], searchUrl: "http://searx" },
        egress: { allow: ["*.example.com", "mcp:home"] },
      },
      auth: { sso: { allowedDomains: [], autoCreate: false, sessionDays: 30 } },
      mcpServers: {},
    });
  });

  test("TOOLS_ASK (tools.ask) sits beside the approval policies of config.json rather than replacing them", () => {
    const paths = home({ tools: { approval: { file_delete: "deny", "mcp__fs__*": "deny" } } });
    const tools = loadConfig(paths, { TOOLS_ASK: "file_write, mcp__fs__write*" }).tools;
    expect(tools.approval).toEqual({ file_delete: "deny", "mcp__fs__*": "deny" });
    expect(tools.ask).toEqual(["file_write", "mcp__fs__write*"]);
  });

  test("OPENAI_BASE_URL and OPENAI_API_KEY are fallbacks for LLM_BASE_URL and LLM_API_KEY", () => {
    const paths = home();
    expect(loadConfig(paths, { OPENAI_BASE_URL: "http://o/v1", OPENAI_API_KEY: "ok" }).llm).toEqual({
      ...DEFAULTS.llm,
      baseUrl: "http://o/v1",
      apiKey: "ok",
    });
    expect(
      loadConfig(paths, { OPENAI_BASE_URL: "http://o/v1", OPENAI_API_KEY: "ok", LLM_BASE_URL: "http://l/v1", LLM_API_KEY: "lk" }).llm,
    ).toEqual({ ...DEFAULTS.llm, baseUrl: "http://l/v1", apiKey: "lk" });
  });

  test("booleans accept the usual spellings", () => {
    const paths = home();
    for (const v of ["1", "true", "TRUE", "yes", "on"]) expect(loadConfig(paths, { HTTP_ENABLED: v, HTTP_WEBHOOK_SECRET: "s" }).http.enabled).toBe(true);
    for (const v of ["0", "false", "no", "off", "False"]) expect(loadConfig(paths, { GATEWAY_ENABLED: v }).gateway.enabled).toBe(false);
  });

  test("whether any layer set the context window is kept: config.json, the environment, a flag", () => {
    expect(loadConfig(home({ llm: { contextWindow: 4096 } }), {}).llm.contextWindow).toBe(4096);
    expect(loadConfig(home({ llm: { contextWindow: 4096 } }), { LLM_CONTEXT_WINDOW: "8192" }).llm.contextWindow).toBe(8192);
    expect(loadConfig(home(), {}, { llm: { contextWindow: 2048 } }).llm.contextWindow).toBe(2048);
    expect(loadConfig(home(), { LLM_CONTEXT_WINDOW: "" }).llm.contextWindow).toBeUndefined();
  });

  test("responses.turnTimeoutS: config.json, RESPONSES_TURN_TIMEOUT_S over it; unset, the revision's", () => {
    expect(loadConfig(home({ responses: { turnTimeoutS: 300 } }), {}).responses.turnTimeoutS).toBe(300);
    expect(loadConfig(home({ responses: { turnTimeoutS: 300 } }), { RESPONSES_TURN_TIMEOUT_S: "900" }).responses.turnTimeoutS).toBe(900);
    const unset = loadConfig(home(), {}).responses;
    expect(unset.turnTimeoutS).toBeUndefined();
    expect(responsesTurnTimeoutMs(unset)).toBe(30_000);
    expect(responsesTurnTimeoutMs({ ...unset, revision: "A" })).toBe(120_000);
    expect(responsesTurnTimeoutMs({ ...unset, revision: "A", turnTimeoutS: 600 })).toBe(600_000);
  });

  test("unknown sections and keys in config.json are ignored", () => {
    const config = loadConfig(home({ nonsense: { a: 1 }, gateway: { port: 4100 } }), {});
    expect(config.gateway.port).toBe(4100);
    expect("nonsense" in config).toBe(false);
  });
});

describe("invalid configuration → ConfigError with a clear message", () => {
  test("config.json that is not JSON names the file", () => {
    const paths = home("{ not json");
    const e = configError(() => loadConfig(paths, {}));
    expect(e.message).toContain(paths.config);
    expect(e.message).toContain("not valid JSON");
  });

  test("config.json that is not an object", () => {
    for (const text of ["[]", "42", "null", '"x"']) {
      const paths = home(text);
      const e = configError(() => loadConfig(paths, {}));
      expect(e.message).toContain(paths.config);
    }
  });

  test("a wrongly typed value in config.json names the setting", () => {
    const e = configError(() => loadConfig(home({ gateway: { port: "eighty" } }), {}));
    expect(e.message).toMatch(/gateway/);
    expect(e.message).toMatch(/port/);
  });

  test("a section that is not an object is refused with its name, as a wrong value inside one is (not the defaults in silence)", () => {
    for (const [section, value] of [["gateway", "x"], ["llm", 3], ["http", ["a"]], ["agent", null], ["mcpServers", "x"]] as const) {
      const e = configError(() => loadConfig(home({ [section]: value }), { GATEWAY_PORT: "4100" }));
      expect(e.message).toContain(section);
    }
  });

  test("GATEWAY_PORT=abc names the variable and the value", () => {
    const e = configError(() => loadConfig(home(), { GATEWAY_PORT: "abc" }));
    expect(e.message).toContain("GATEWAY_PORT");
    expect(e.message).toContain("abc");
  });

  test("other malformed numbers and booleans name their variable", () => {
    const cases: Env[] = [
      { HTTP_PORT: "80x" },
      { RESPONSES_RATE_LIMIT: "lots" },
      { RESPONSES_RATE_LIMIT: "1.5" },
      { RESPONSES_TURN_TIMEOUT_S: "slow" },
      { LLM_CONTEXT_WINDOW: "8k" },
      { AGENT_MAX_STEPS: "many" },
      { GATEWAY_ENABLED: "maybe" },
      { HTTP_ENABLED: "sure" },
      { CLI_ENABLED: "2" },
    ];
    for (const env of cases) {
      const [name] = Object.keys(env);
      const e = configError(() => loadConfig(home(), env));
      expect(e.message).toContain(name!);
    }
  });

  test("out-of-range values", () => {
    for (const [env, fragment] of [
      [{ GATEWAY_PORT: "70000" }, "port"],
      [{ GATEWAY_PORT: "-1" }, "port"],
      [{ RESPONSES_RATE_LIMIT: "-1" }, "rateLimit"],
      [{ RESPONSES_API_REVISION: "C" }, "revision"],
      [{ AGENT_MAX_STEPS: "0" }, "maxSteps"],
      [{ RESPONSES_TURN_TIMEOUT_S: "0" }, "turnTimeoutS"],
      [{ LLM_CONTEXT_WINDOW: "512" }, "contextWindow"],
    ] as [Env, string][]) {
      const e = configError(() => loadConfig(home(), env));
      expect(e.message).toContain(fragment);
      expect(e.message).toStartWith("invalid configuration");
    }
  });

  test("a bad flag value is caught as well", () => {
    const e = configError(() => loadConfig(home(), {}, { gateway: { port: 1.5 } }));
    expect(e.message).toContain("port");
  });
});
