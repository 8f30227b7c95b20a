
import { isUuid } from "../conversation/ids";
import { configuredInstanceToken, loadConfig, servicePaths, type Env } from "../config/load";
import { ApiError, ChatClient, ConnectionError } from "../client/http";
import { connectHost } from "./instance";
import { fileLog, logFilePath } from "../tui/log";
import { parseFlags, UsageError } from "./args";
import { CHAT_USAGE } from "./usage";

/** `service chat`: the terminal UI, attached over HTTP to a service that is already running. */
export async function chat(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    { url: { type: "string" }, token: { type: "string" }, thread: { type: "string" }, home: { type: "string" } },
    CHAT_USAGE,
  );
  if (f.help) {
    process.stdout.write(CHAT_USAGE);
    return 0;
  }
  const threadId = f.thread as string | undefined;
  if (threadId !== undefined && !isUuid(threadId)) throw new UsageError(`--thread must be a thread id (a UUID), not '${threadId}'`, CHAT_USAGE);

  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  // the configuration is read only for what the flags leave open
  const config = f.url && f.token ? undefined : loadConfig(paths, env);
  let url = (f.url as string | undefined) ?? `http://${connectHost(config!.gateway.host)}:${config!.gateway.port}`;
  if (!/^https?:\/\//i.test(url)) url = `http://${url}`;
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url must be a URL like http://127.0.0.1:3000, not '${url}'`, CHAT_USAGE);
  }
  const token = (f.token as string | undefined) || (config && configuredInstanceToken(env, config, paths)?.token);
  if (!token) {
    process.stderr.write(
      `service: no instance token: pass --token, set SERVICE_REBORN_WEBUI_TOKEN or GATEWAY_AUTH_TOKEN, or run \`service onboard\` (writes ${paths.token})\n`,
    );
    return 1;
  }

  const client = new ChatClient({ baseUrl: url, token });
  try {
    await client.status();
    if (threadId) await client.history(threadId);
  } catch (e) {
    if (e instanceof ConnectionError) {
      process.stderr.write(`service: cannot connect to ${url}: is \`service serve\` running there? (${e.message})\n`);
    } else if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      process.stderr.write(`service: ${url} refused the token (${e.status}): check --token or SERVICE_REBORN_WEBUI_TOKEN\n`);
    } else if (e instanceof ApiError && e.status === 404 && threadId) {
      process.stderr.write(`service: no thread ${threadId} at ${url}\n`);
    } else {
      process.stderr.write(`service: ${url} answered with an error: ${(e as Error).message}\n`);
    }
    return 1;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    process.stderr.write("service: `service chat` needs a terminal (stdin and stdout must be a TTY)\n");
    return 1;
  }

  const { startTui } = await import("../tui/app");
  const tui = startTui({ url, token, threadId, log: fileLog(logFilePath(paths.home)) });
  await tui.done;
  // The terminal may be gone (closed window, killed pane): Bun would keep polling the dead pty.
  process.exit(0);
}
