// Starts the real service in-process for tests: a temp service home with a real database
// file, the real HTTP stack on a loopback port, and a scripted LLM that records requests.
// With TEST_DATABASE=postgres (`bun run test:pg`) the database is a new one on a throwaway
// PostgreSQL cluster instead of the file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicePaths, type Env } from "../../src/config/load";
import type { ConfigLayer } from "../../src/config/schema";
import { createLogger } from "../../src/log";
import { startService, type RunningService } from "../../src/server";
import { startScriptedLLM, type ScriptedLLM } from "./scripted-llm";
import { onPostgres, postgresOf } from "./postgres";

export const TOKEN = "test-instance-token-0123456789abcdef";

export interface TestService {
  url: string;
  token: string;
  home: string;
  llm: ScriptedLLM;
  service: RunningService;
  /** The message of every log record. */
  logs: string[];
  /** Every log line as written (LOG_FORMAT=json), redaction included. */
  logLines: string[];
  /** fetch against the service with the instance token (override headers to change it). */
  api(path: string, init?: RequestInit & { json?: unknown; token?: string | null }): Promise<Response>;
  /** POST /api/v1/responses with a JSON body; returns status and parsed body. */
  respond(body: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** Creates a user through the admin API; returns its token and record. */
  createUser(role?: "owner" | "admin" | "member"): Promise<{ token: string; user: any }>;
  stop(): Promise<void>;
}

export async function startTestService(
  opts: {
    env?: Env;
    llm?: ScriptedLLM;
    turnTimeoutMs?: number;
    keepHome?: string;
    callbackDelaysMs?: number[];
    jobRetryDelaysMs?: number[];
    busyTimeoutMs?: number;
    /** Written to the home's config.json before the service starts (settings the environment cannot give, such as llm.prices). */
    config?: ConfigLayer | Record<string, unknown>;
  } = {},
): Promise<TestService> {
  const home = opts.keepHome ?? join(mkdtempSync(join(tmpdir(), "service-test-")), "home");
  if (opts.config !== undefined) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, "config.json"), JSON.stringify(opts.config));
  }
  const llm = opts.llm ?? (await startScriptedLLM());
  const env: Env = {
    SERVICE_HOME: home,
    SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: "test-key",
    LLM_MODEL: "scripted-model",
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    RESPONSES_RATE_LIMIT: "0",
    // one scripted error is one failure; tests of retries set their own count
    LLM_MAX_RETRIES: "0",
    ...(onPostgres ? { DATABASE_URL: await postgresOf(home) } : {}),
    ...opts.env,
  };
  const logs: string[] = [];
  const logLines: string[] = [];
  const log = createLogger({
    format: "json",
    level: "debug",
    write: (line) => {
      logLines.push(line);
      logs.push(JSON.parse(line).msg);
    },
  });
  const service = await startService({ paths: servicePaths(env), env, log, turnTimeoutMs: opts.turnTimeoutMs, callbackDelaysMs: opts.callbackDelaysMs, jobRetryDelaysMs: opts.jobRetryDelaysMs, busyTimeoutMs: opts.busyTimeoutMs });
  const url = service.url;

  const api: TestService["api"] = (path, init = {}) => {
    const headers = new Headers(init.headers);
    const token = init.token === undefined ? TOKEN : init.token;
    if (token !== null && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(url + path, { ...init, headers, body });
  };

  return {
    url,
    token: TOKEN,
    home,
    llm,
    service,
    logs,
    logLines,
    api,
    async respond(body, token) {
      const res = await api("/api/v1/responses", { method: "POST", json: body, token });
      const text = await res.text();
      let parsed: any = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed };
    },
    async createUser(role = "member") {
      const res = await api("/api/webchat/v2/admin/users", { method: "POST", json: { role } });
      if (res.status !== 200) throw new Error(`createUser: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as any;
      return { token: body.api_token, user: body.user };
    },
    async stop() {
      await service.stop();
      if (!opts.llm) await llm.close();
      if (!opts.keepHome) rmSync(join(home, ".."), { recursive: true, force: true });
    },
  };
}
