
import { Agent } from "./agent/turns";
import { memoryIdentity } from "./memory/identity";
import { MemoryService } from "./memory/service";
import { createApp } from "./app";
import type { Services } from "./services";
import { Authenticator } from "./auth/principal";
import { UserAdmin } from "./auth/users";
import { SsoService } from "./auth/sso/service";
import { newToken } from "./auth/tokens";
import { configuredInstanceToken, databaseUrl, ensureWritableHome, loadConfig, type Env, type Paths, type TokenSource as ConfiguredTokenSource } from "./config/load";
import { responsesTurnTimeoutMs, type Config, type ConfigLayer } from "./config/schema";
import { ConfigError, StartupError, TurnError } from "./errors";
import { openAiLlm } from "./llm/openai";
import { bunFetchLimit, StreamSlots } from "./llm/stream-slots";
import { ContextWindow } from "./llm/window";
import { cannotOpen, openDatabase, storeUnavailable, type Database } from "./store/db";
import { ensureOwner } from "./store/users";
import { ToolRegistry } from "./tools/registry";
import { builtinTools } from "./tools/builtin";
import { createSafety } from "./safety";
import { approvalPolicies, warnUnmatchedApproval } from "./agent/policy";
import { recordEgress } from "./store/egress";
import { McpManager } from "./mcp/manager";
import { ExtensionManager } from "./extensions/manager";
import { startMemorySteward } from "./memory-steward";
import { watchLoopPauses } from "./observability/loop-pauses";
import { startWebhookListener } from "./channels/webhook/listener";
import { callbackAllowList, createJobQueue, type JobQueue } from "./channels/webhook/queue";
import { webhookConfigProblem } from "./channels/webhook/settings";
import { Routines } from "./routines/service";
import { RoutineScheduler } from "./routines/scheduler";
import { buildInfo, VERSION } from "./version";
import type { Logger } from "./log";
import { Budgets } from "./usage/budgets";
import { UsageLedger } from "./usage/ledger";
import { startTracing } from "./observability/tracing";

export type TokenSource = ConfiguredTokenSource | "generated";

/** The configured instance token (config/load.ts), else one generated for this run. */
export function resolveInstanceToken(env: Env, config: Config, paths: Paths): { token: string; source: TokenSource } {
  return configuredInstanceToken(env, config, paths) ?? { token: newToken(), source: "generated" };
}

export interface RunningService {
  url: string;
  /** The webhook channel's base URL, when it is enabled. */
  webhookUrl?: string;
  port: number;
  config: Config;
  token: { token: string; source: TokenSource };
  services: Services;
  stop(): Promise<void>;
}

export interface StartOptions {
  paths: Paths;
  env: Env;
  flags?: ConfigLayer;
  /** Where the service logs (`serve` makes it from LOG_FORMAT and LOG_LEVEL). */
  log: Logger;
  channels?: { tui: boolean };
  /** Overrides the revision's non-streaming turn timeout (tests only). */
  turnTimeoutMs?: number;
  /** Overrides the pauses between webhook callback attempts (tests only). */
  callbackDelaysMs?: number[];
  /** Overrides the pauses before a job that failed for a transient reason runs again (tests only). */
  jobRetryDelaysMs?: number[];
  /** Overrides how long a statement waits for another connection's lock (tests only). */
  busyTimeoutMs?: number;
}

export async function startService(opts: StartOptions): Promise<RunningService> {
  const config = loadConfig(opts.paths, opts.env, opts.flags);
  const { log } = opts;
  ensureWritableHome(opts.paths);
  const webhookProblem = config.http.enabled ? webhookConfigProblem(config) : undefined;
  if (webhookProblem) throw new ConfigError(webhookProblem);
  const database = await writableDatabase(databaseUrl(config, opts.paths), config.database.authToken, opts.busyTimeoutMs);
  // asked of the LLM server while the rest starts up; the gateway waits a moment for it, not longer
  const contextWindow = new ContextWindow(config.llm, { log: log.child({ component: "llm" }) });
  const windowRead = contextWindow.refresh();

  const token = resolveInstanceToken(opts.env, config, opts.paths);
  // every secret of the service's own, so none of them reaches the model, an answer or a log line
  const ownSafety = createSafety({
    secrets: [
      token.token,
      config.gateway.authToken,
      config.llm.apiKey,
      ...config.llm.fallbacks.map((f) => f.apiKey),
      config.http.webhookSecret,
      ...Object.values(config.http.sources).map((s) => s.secret),
      config.metrics.token,
      config.database.authToken,
      config.auth.sso.google?.clientSecret,
      config.auth.sso.github?.clientSecret,
      config.auth.sso.oidc?.clientSecret,
    ],
  });
  const streams = new StreamSlots(streamLimit(config.llm.maxConcurrent, log), log);
  const llm = openAiLlm({ ...config.llm, embeddingModel: config.memory.embeddingModel, slots: streams });
  const { broadcast } = database;
  // identity documents are read once per user: a write in another replica makes this one read them again
  const memory = new MemoryService({ db: database.db, locks: database.locks("memory"), written: (id) => broadcast.publish(MEMORY_WRITTEN, id), llm, log: log.child({ component: "memory" }) });
  broadcast.subscribe(MEMORY_WRITTEN, (id) => typeof id === "string" && memory.forget(id));
  const tools = new ToolRegistry();
  const callbackHosts = callbackAllowList(config, log);
  // the job queue and the scheduler need the agent, which needs the tools: bound once they exist
  let queue: JobQueue | undefined;
  let scheduler: RoutineScheduler | undefined;
  const routines = new Routines({
    db: database.db,
    changed: async (id) => {
      broadcast.publish(ROUTINE_CHANGED, id);
      await scheduler?.changed(id);
    },
    kick: () => queue?.worker.kick(),
    callbackHosts,
    canSign: !!config.http.webhookSecret,
  });
  for (const tool of builtinTools({ config, paths: opts.paths, db: database.db, llm, memory, routines })) tools.register(tool);
  let publicUrl = "";
  // installed extensions (service extension install): their tools, credentials and OAuth gates
  const extensions = new ExtensionManager({
    home: opts.paths.home,
    db: database.db,
    registry: tools,
    access: config.tools.web,
    log: log.child({ component: "extensions" }),
    connectUrl: (name, threadId) => `${publicUrl}/extensions/connect/${name}${threadId ? `?thread=${threadId}` : ""}`,
  });
  // and extension credentials as they become known
  const safety = extensions.secrets.guard(ownSafety);
  log.redactWith(safety.redact);
  // MCP tools register as their servers get ready; untrusted servers' tools ask first
  const mcp = new McpManager(config.mcpServers, tools, log.child({ component: "mcp" }));
  await extensions.load();
  // a tool's own default (mission_create asks), else its MCP server's; MCP servers scoped to the owner are denied to others
  const policies = approvalPolicies(
    database.db,
    config,
    (name) => tools.get(name)?.approval ?? mcp.defaultPolicy(name),
    (tool) => tools.get(tool)?.ownerOnly === true,
  );
  void warnUnmatchedApproval(config.tools, { names: () => tools.specs().map((t) => t.name), servers: mcp.listings() }, log.warn);
  const ledger = new UsageLedger({ db: database.db, log });
  const budgets = new Budgets({ db: database.db, ledger, instanceMonthlyUsd: config.budgets.monthlyUsd, log });
  const agent = new Agent({
    db: database.db,
    llm,
    tools,
    identity: memoryIdentity(memory),
    maxSteps: config.agent.maxSteps,
    safety,
    policies: policies.policies,
    allowAlways: async (userId, tool) => {
      await policies.allowAlways(userId, tool);
      broadcast.publish(USER_CHANGED, userId);
    },
    destinations: policies.destinations,
    recordEgress: (entry) => recordEgress(database.db, entry),
    gateUrl: (threadId) => `${publicUrl}/?thread=${threadId}`,
    authorization: extensions.authorization,
    toolsReady: (signal) => mcp.ready(config.mcp.startWaitMs, signal),
    context: contextWindow.settings(config.llm),
    notes: memory,
    usage: { prices: config.llm.prices, ledger, budgets },
    locks: database.locks("thread"),
    log,
  });
  // the durable job queue (webhook jobs and routine runs) and the routines' scheduler
  const jobs = createJobQueue(config, database.db, agent, log, callbackHosts, { callbackDelaysMs: opts.callbackDelaysMs, retryDelaysMs: opts.jobRetryDelaysMs, broadcast });
  const ticks = new RoutineScheduler({
    db: database.db,
    kick: () => jobs.worker.kick(),
    log,
    // a tick over its owner's budget is skipped (reason budget) rather than queued to fail
    overBudget: (userId) => budgets.check(userId).then(
      () => false,
      (e) => (e instanceof TurnError && e.code === "budget_exceeded" ? true : Promise.reject(e)),
    ),
  });
  // another replica's routine changed: every replica's scheduler follows every routine (a tick's unique key fires it once)
  broadcast.subscribe(ROUTINE_CHANGED, (id) => typeof id === "string" && void ticks.changed(id));
  queue = jobs;
  scheduler = ticks;
  const auth = new Authenticator(database.db, token.token);
  /** What this process remembers of a user, forgotten when the user changes (here or in another replica). */
  const forgetUser = (id: string) => {
    auth.forget(id);
    memory.forget(id);
    policies.forget(id);
    budgets.forget(id);
  };
  broadcast.subscribe(USER_CHANGED, (id) => typeof id === "string" && forgetUser(id));
  const loopPauses = watchLoopPauses();
  const services: Services = {
    memory,
    config,
    home: opts.paths.home,
    db: database.db,
    llm,
    llmStreams: streams,
    loopPauses,
    tools,
    agent,
    auth,
    users: new UserAdmin({ db: database.db, home: opts.paths.home, forget: (id) => {
        forgetUser(id);
        broadcast.publish(USER_CHANGED, id);
      }, cancelTurns: (id) => agent.cancelUser(id), stopTurns: (id) => agent.stopUser(id) }),
    sso: new SsoService({ db: database.db, settings: config.auth.sso, auth, gatewayUrl: () => publicUrl, log: log.child({ component: "sso" }) }),
    turnLimiter: database.rateLimiter("turns", config.responses.rateLimit),
    broadcast,
    version: VERSION,
    build: buildInfo(),
    contextWindow,
    startedAt: Date.now(),
    channels: { gateway: config.gateway.enabled, webhook: config.http.enabled, tui: opts.channels?.tui ?? false },
    turnTimeoutMs: opts.turnTimeoutMs ?? responsesTurnTimeoutMs(config.responses),
    backgroundTurnTimeoutMs: config.agent.turnTimeoutS * 1000,
    log,
    mcp,
    extensions,
    routines,
    budgets,
    // prom-client is loaded only when metrics are on
    ...(config.metrics.enabled
      ? {
          metrics: {
            metrics: new (await import("./observability/metrics")).Metrics({ bus: agent.bus, db: database.db, mcp: () => mcp.status() }),
            tokens: [token.token, ...(config.metrics.token ? [config.metrics.token] : [])],
          },
        }
      : {}),
  };

  const tracing = await startTracing({ endpoint: config.telemetry.otlpEndpoint, serviceName: config.telemetry.serviceName, version: VERSION, bus: agent.bus, log: log.child({ component: "tracing" }) });
  memory.start();
  const steward = startMemorySteward({ openStreams: () => streams.counts().active });
  const app = createApp(services);
  await settledWithin(windowRead, WINDOW_START_WAIT_MS);
  const closeAll = () => (void tracing?.shutdown(), contextWindow.close(), steward.stop(), loopPauses.stop(), memory.stop(), database.close());
  const server = config.gateway.enabled
    ? await listening(closeAll, "the gateway", config.gateway, "--port or GATEWAY_PORT", () =>
        Bun.serve({
          hostname: config.gateway.host,
          port: config.gateway.port,
          fetch(request) {
            steward.touch();
            loopPauses.touch();
            return app.fetch(request);
          },
          // a non-streaming turn answers its first byte at its end; Bun's longest idle timeout is 255 s
          idleTimeout: services.turnTimeoutMs > 225_000 ? 0 : 240,
          // the app checks the 14 MiB limit itself, so that a larger body gets the JSON envelope
          maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        }),
      )
    : undefined;
  const port = server?.port ?? 0;
  const url = `http://${config.gateway.host.includes(":") ? `[${config.gateway.host}]` : config.gateway.host}:${port}`;
  publicUrl = url;
  const webhook = config.http.enabled
    ? await listening(() => (void server?.stop(true), closeAll()), "the webhook channel", config.http, "HTTP_PORT", () =>
        startWebhookListener(config, database.db, jobs, log),
      )
    : undefined;
  await jobs.start();
  await ticks.start();
  mcp.start();
  extensions.start();
  if (!llm.configured) log.warn("no LLM is configured: turns will fail until LLM_BASE_URL, LLM_API_KEY and LLM_MODEL are set");

  let stopping: Promise<void> | undefined;
  return {
    url,
    webhookUrl: webhook?.url,
    port,
    config,
    token,
    services,
    stop() {
      stopping ??= (async () => {
        // stop listening; the promise resolves once every open response has been sent
        const drained = Promise.all([server?.stop(false), webhook?.server.stop(false)]);
        ticks.stop();
        // long polls are answered, no job starts, and the queue waits for the running ones
        const queueStopped = jobs.stop();
        // let running turns finish for a moment, then cancel what is left; all of it is stored
        await settledWithin(agent.idle(), config.agent.shutdownGraceMs);
        await agent.cancelAll();
        await ledger.flush();
        await queueStopped;
        await mcp.stop();
        await extensions.stop();
        await tracing?.shutdown();
        await settledWithin(drained, 2_000);
        void server?.stop(true);
        void webhook?.server.stop(true);
        contextWindow.close();
        steward.stop();
        loopPauses.stop();
        memory.stop();
        await database.close();
      })();
      return stopping;
    },
  };
}

/** What the replicas on one database tell each other (see store/broadcast.ts). */
const ROUTINE_CHANGED = "routine.changed";
const USER_CHANGED = "user.changed";
const MEMORY_WRITTEN = "memory.written";
/** Requests of Bun's `fetch` kept for everything but LLM streams: tools, callbacks, MCP, embeddings. */
const FETCH_RESERVE = 32;

/**
 * `llm.maxConcurrent`, unless Bun's `fetch` allows fewer requests at once (a process started
 * without `serve`'s relaunch, src/cli/relaunch.ts): then streams past it would queue inside
 * Bun unseen, so they wait in the service's own queue instead, where they are counted.
 */
function streamLimit(configured: number, log: Logger): number {
  const fetchLimit = bunFetchLimit();
  if (configured + FETCH_RESERVE <= fetchLimit) return configured;
  const limit = Math.max(1, fetchLimit - FETCH_RESERVE);
  log.info(`at most ${limit} LLM streams at once: Bun's fetch runs ${fetchLimit} requests at once (BUN_CONFIG_MAX_HTTP_REQUESTS), below llm.maxConcurrent ${configured}`);
  return limit;
}

/** How long the gateway waits for the LLM server to say its context window before it listens. */
const WINDOW_START_WAIT_MS = 1_500;

/** The database opened, migrated and its owner in place; one that cannot be written is a StartupError (one line). */
async function writableDatabase(url: string, authToken: string | undefined, busyTimeoutMs?: number): Promise<Database> {
  let database: Database | undefined;
  try {
    database = await openDatabase(url, authToken, busyTimeoutMs);
    await ensureOwner(database.db);
    return database;
  } catch (e) {
    database?.close();
    const down = storeUnavailable(e);
    if (!down) throw e;
    throw new StartupError(cannotOpen(url, down));
  }
}

/** Starts a listener; a port in use is one clear StartupError (after `cleanup`), not a stack trace. */
async function listening<T>(cleanup: () => void, what: string, at: { host: string; port: number }, change: string, start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    cleanup();
    if ((e as { code?: string }).code !== "EADDRINUSE") throw e;
    throw new StartupError(
      `${what} cannot listen on ${at.host}:${at.port}: the port is in use. Is the service already running (\`service status\`)? Choose another port with ${change}.`,
    );
  }
}

/** Waits for the promise, but no longer than `ms`; leaves no timer behind. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
