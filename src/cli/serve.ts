import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ensureWritableHome, loadConfig, readConfigFile, servicePaths, type Paths } from "../config/load";
import { unknownKeys, unknownKeyWarning } from "../config/unknown-keys";
import { createLogger, guardStdio } from "../log";
import { describeWindow } from "../llm/window";
import { describeBuild } from "../version";
import { startService, type RunningService } from "../server";
import { logFilePath } from "../tui/log";
import { parseFlags, UsageError } from "./args";
import { connectHost, removeRunRecord, writeRunRecord } from "./instance";
import { SERVE_USAGE } from "./usage";
import { webhookExposure } from "./exposure";
import { idleCompilerThreads } from "../compiler-threads";

export async function serve(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    { host: { type: "string" }, port: { type: "string" }, revision: { type: "string" }, home: { type: "string" } },
    SERVE_USAGE,
  );
  if (f.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const port = f.port === undefined ? undefined : Number(f.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new UsageError(`--port must be a port number, not '${f.port}'`, SERVE_USAGE);
  }
  const revision = typeof f.revision === "string" ? f.revision.toUpperCase() : undefined;
  if (revision !== undefined && revision !== "A" && revision !== "B") throw new UsageError("--revision must be A or B", SERVE_USAGE);

  // `service serve | head -1`: once the reader goes away, output is dropped and the service runs on
  guardStdio();
  const env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const flags = { gateway: { host: f.host as string | undefined, port }, responses: { revision: revision as "A" | "B" | undefined } };
  // The TUI (a client of this service's own listener) when CLI_ENABLED and both ends are a terminal.
  const settings = loadConfig(paths, env, flags);
  ensureWritableHome(paths); // before the log file of the TUI goes there
  const tui = settings.cli.enabled && settings.gateway.enabled && !!process.stdin.isTTY && !!process.stdout.isTTY;
  const logFile = logFilePath(paths.home);
  const log = createLogger({ format: settings.log.format, level: settings.log.level, write: tui ? appendTo(logFile) : undefined });
  for (const k of unknownKeys(readConfigFile(paths))) log.warn(unknownKeyWarning(paths.config, k));
  const svc = await startService({ paths, env, flags, log, channels: { tui } });
  const compilers = idleCompilerThreads(env);
  if (compilers) log.debug(`JavaScriptCore's ${compilers} compiler threads run at idle priority (SERVICE_JIT_PRIORITY=normal keeps them as they were)`);
  writeRunRecord(paths, {
    pid: process.pid,
    url: svc.config.gateway.enabled ? svc.url : null,
    webhook_url: svc.webhookUrl ?? null,
    version: svc.services.version,
    started_at: new Date(svc.services.startedAt).toISOString(),
  });
  const lines = startupLines(svc, paths);

  if (tui) {
    for (const line of lines) log.info(line.trim());
    try {
      const { startTui } = await import("../tui/app");
      const running = startTui({
        url: `http://${connectHost(svc.config.gateway.host)}:${svc.port}`,
        token: svc.token.token,
        log: log.child({ component: "tui" }).info,
        banner: [...lines, `  log: ${logFile}`, "Ctrl+C stops the service."],
      });
      await running.done; // Ctrl+C, SIGINT or SIGTERM
    } catch (e) {
      await stop(svc, paths);
      throw e;
    }
  } else {
    // listened for before the first line says the service is up: a signal right after it stops it cleanly too
    const signalled = new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    if (svc.config.log.format === "json") log.info("listening", startupFields(svc, paths));
    else writeOut(lines.join("\n") + "\n");
    await signalled;
  }
  // the terminal the TUI gave back shows these too; otherwise they are log lines on stdout
  const say = (line: string) => (log.info(line), tui && writeOut(`${line}\n`));
  say("shutting down: finishing running turns");
  await stop(svc, paths);
  say("stopped");
  // A TUI whose terminal went away leaves Bun reading a dead pty; leave rather than spin.
  if (tui) process.exit(0);
  return 0;
}

async function stop(svc: RunningService, paths: Paths): Promise<void> {
  try {
    await svc.stop();
  } finally {
    removeRunRecord(paths);
  }
}

/** Where the web UI is and how to sign in; what `serve` prints when it is up (pretty format). */
function startupLines(svc: RunningService, paths: Paths): string[] {
  const { config, token } = svc;
  const web = webUiUrl(svc);
  return [
    `service ${svc.services.version} listening on ${svc.url}`,
    ...(config.gateway.enabled ? [`  open the web UI at ${web}/`] : ["  the gateway is off (GATEWAY_ENABLED=false): no web UI, no API"]),
    ...(config.gateway.enabled && token.source === "webui-token" ? [`  sign in with: ${web}/login?token=${token.token}`] : []),
    `  home: ${paths.home}`,
    `  build: ${describeBuild(svc.services.build)}`,
    `  Responses API: ${svc.url}/api/v1/responses (revision ${config.responses.revision})`,
    ...(svc.webhookUrl ? [`  webhook channel: ${svc.webhookUrl}/webhook`] : []),
    ...(webhookExposure(config) ? [`  note: ${webhookExposure(config)}`] : []),
    `  LLM: ${llmLine(svc)}`,
    ...(svc.services.llm.configured ? [`  context window ${windowLine(svc)}`] : []),
    token.source === "generated"
      ? `  instance token (generated for this run, not saved): ${token.token}`
      : `  instance token: from ${token.source === "webui-token" ? paths.token : token.source}`,
  ];
}

/** The same facts as one JSON record: nothing secret (the token stays in its file). */
function startupFields(svc: RunningService, paths: Paths) {
  const { config, token } = svc;
  return {
    version: svc.services.version,
    build: svc.services.build,
    url: svc.url,
    web_ui: config.gateway.enabled ? `${webUiUrl(svc)}/` : null,
    home: paths.home,
    revision: config.responses.revision,
    webhook_url: svc.webhookUrl ?? null,
    ...(webhookExposure(config) ? { webhook_note: webhookExposure(config) } : {}),
    llm: llmLine(svc),
    context_window: svc.services.contextWindow.reading,
    instance_token:
      token.source === "generated"
        ? "generated for this run and not shown in JSON logs: run `service onboard` or set SERVICE_REBORN_WEBUI_TOKEN"
        : `from ${token.source === "webui-token" ? paths.token : token.source}`,
  };
}

const webUiUrl = (svc: RunningService) => `http://${connectHost(svc.config.gateway.host)}:${svc.port}`;

function llmLine(svc: RunningService): string {
  const { config } = svc;
  return svc.services.llm.configured
    ? `${config.llm.model} at ${config.llm.baseUrl ?? "the OpenAI API"}`
    : "not configured (set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL or run `service onboard`)";
}

function windowLine(svc: RunningService): string {
  const window = svc.services.contextWindow;
  return `${describeWindow(window.reading)}${window.asking ? ", until the LLM server says its own" : ""}`;
}

function writeOut(text: string): void {
  try {
    process.stdout.write(text);
  } catch {
    // stdout is gone: the service runs on
  }
}

/** Log lines appended to a file (mode 0600, its folder 0700): the log while the TUI owns the terminal. */
function appendTo(path: string): (line: string) => void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return (line) => appendFileSync(path, `${line}\n`, { mode: 0o600 });
}
