import { loadConfig, servicePaths } from "../config/load";
import { startService } from "../server";
import { connectHost } from "../tui/client";
import { fileLog, logFilePath } from "../tui/log";
import { parseFlags, UsageError } from "./args";
import { SERVE_USAGE } from "./usage";

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

  const env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const flags = { gateway: { host: f.host as string | undefined, port }, responses: { revision: revision as "A" | "B" | undefined } };
  // The TUI (a client of this service's own listener) when CLI_ENABLED and both ends are a terminal.
  const settings = loadConfig(paths, env, flags);
  const tui = settings.cli.enabled && settings.gateway.enabled && !!process.stdin.isTTY && !!process.stdout.isTTY;
  const logFile = logFilePath(paths.home);
  const log = tui ? fileLog(logFile) : undefined;
  const svc = await startService({ paths, env, flags, log, channels: { tui } });
  const { config, token } = svc;
  const lines = [
    `service ${svc.services.version} listening on ${svc.url}`,
    `  home: ${paths.home}`,
    `  Responses API: ${svc.url}/api/v1/responses (revision ${config.responses.revision})`,
    ...(svc.webhookUrl ? [`  webhook channel: ${svc.webhookUrl}/webhook`] : []),
    `  LLM: ${svc.services.llm.configured ? `${config.llm.model} at ${config.llm.baseUrl ?? "the OpenAI API"}` : "not configured (set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL or run `service onboard`)"}`,
    token.source === "generated"
      ? `  instance token (generated for this run, not saved): ${token.token}`
      : `  instance token: from ${token.source === "webui-token" ? paths.token : token.source}`,
  ];

  if (tui && log) {
    for (const line of lines) log(line);
    try {
      const { startTui } = await import("../tui/app");
      const running = startTui({
        url: `http://${connectHost(config.gateway.host)}:${svc.port}`,
        token: token.token,
        log,
        banner: [...lines, `  log: ${logFile}`, "Ctrl+C stops the service."],
      });
      await running.done; // Ctrl+C, SIGINT or SIGTERM
    } catch (e) {
      await svc.stop();
      throw e;
    }
  } else {
    process.stdout.write(lines.join("\n") + "\n");
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
  }
  process.stdout.write("shutting down: finishing running turns\n");
  await svc.stop();
  process.stdout.write("stopped\n");
  // A TUI whose terminal went away leaves Bun reading a dead pty; leave rather than spin.
  if (tui) process.exit(0);
  return 0;
}
