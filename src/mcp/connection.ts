import type { McpServerStatus } from "./status";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/mcp";
import { VERSION } from "../version";
import { resultText } from "./result";

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Generous: `npx -y` or `uvx` may first download the server. */
const CONNECT_TIMEOUT_MS = 60_000;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/** A server that stayed up this long starts its backoff from the beginning when it dies. */
const HEALTHY_MS = 60_000;
/** Streamable HTTP has no process to watch: a ping tells whether the server is still there. */
const HTTP_PING_MS = 30_000;
const STDERR_TAIL_CHARS = 2_000;

export interface ConnectionHooks {
  /** The server's tools, after every (re)connect and list change. */
  tools(tools: McpTool[]): void;
  log(message: string): void;
  /** A failure: it could not start, went away, or its tools could not be refreshed (else `log`). */
  warn?(message: string): void;
}

const message = (e: unknown) =>
  e instanceof StreamableHTTPError && e.code ? `HTTP ${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);

/**
 * One configured MCP server: connects in the background, restarts it with exponential
 * backoff when it dies, and calls its tools with a timeout.
 */
export class McpConnection {
  state: McpServerStatus["state"] = "starting";
  error: string | null = null;
  toolCount = 0;
  #client?: Client;
  #transport?: StdioClientTransport | StreamableHTTPClientTransport;
  /** Bumped whenever the current client is given up, so its late callbacks are ignored. */
  #generation = 0;
  #failures = 0;
  #readyAt = 0;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #pingTimer?: ReturnType<typeof setInterval>;
  #stopped = false;
  #stderr = "";
  #started!: () => void;
  /** Settles once the first attempt to start the server has succeeded or failed. */
  readonly firstAttempt = new Promise<void>((resolve) => (this.#started = resolve));

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly hooks: ConnectionHooks,
  ) {}

  get transportKind(): "stdio" | "http" {
    return "url" in this.config ? "http" : "stdio";
  }

  get trusted(): boolean {
    return this.config.trusted === true;
  }

  get timeoutMs(): number {
    return this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  status(): McpServerStatus {
    return { name: this.name, transport: this.transportKind, state: this.state, tools: this.toolCount, error: this.error };
  }

  start(): void {
    void this.#connect();
  }

  async #connect(): Promise<void> {
    const generation = ++this.#generation;
    const client = new Client({ name: "service", version: VERSION });
    const transport = this.#newTransport();
    this.#client = client;
    this.#transport = transport;
    // while connecting, a close makes connect() fail and the catch below restarts
    client.onclose = () => this.state === "ready" && this.#lost(generation, this.#closedReason());
    // stray transport errors (a dropped SSE stream the SDK reconnects) are not fatal on their own
    client.onerror = () => {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.#refresh(generation, client));
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      const tools = await listAllTools(client, CONNECT_TIMEOUT_MS);
      if (generation !== this.#generation) return void closeQuietly(client);
      this.state = "ready";
      this.error = null;
      this.#readyAt = Date.now();
      this.hooks.tools(tools);
      this.hooks.log(`mcp ${this.name}: ready with ${tools.length} tool${tools.length === 1 ? "" : "s"}`);
      if (this.transportKind === "http") this.#startPing(generation, client);
      this.#started();
    } catch (e) {
      if (generation !== this.#generation) return void closeQuietly(client);
      const stderr = this.#stderrTail();
      const closed = e instanceof McpError && e.code === ErrorCode.ConnectionClosed;
      this.#restart("failed", `could not start: ${closed ? this.#closedReason() : `${message(e)}${stderr ? ` (stderr: ${stderr})` : ""}`}`);
      this.#started();
    }
  }

  #newTransport(): StdioClientTransport | StreamableHTTPClientTransport {
    const c = this.config;
    if ("url" in c) return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers ?? {} } });
    const transport = new StdioClientTransport({ command: c.command, args: c.args ?? [], env: c.env, cwd: c.cwd, stderr: "pipe" });
    this.#stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  #stderrTail(): string {
    const lines = this.#stderr.trim().split("\n").filter(Boolean);
    return lines.slice(-3).join(" | ").slice(-500);
  }

  #closedReason(): string {
    const what = this.transportKind === "stdio" ? "the server process exited" : "the connection closed";
    const stderr = this.#stderrTail();
    return stderr ? `${what} (stderr: ${stderr})` : what;
  }

  /** The current client went away: restart, unless that client was already given up. */
  #lost(generation: number, reason: string): void {
    if (generation !== this.#generation || this.#stopped) return;
    this.#restart(this.state === "ready" ? "restarting" : "failed", reason);
  }

  #restart(state: "restarting" | "failed", reason: string): void {
    if (this.#stopped) return;
    this.#generation++;
    clearInterval(this.#pingTimer);
    if (this.#client) void closeQuietly(this.#client);
    this.#client = undefined;
    this.#transport = undefined;
    if (this.#readyAt && Date.now() - this.#readyAt >= HEALTHY_MS) this.#failures = 0;
    this.#readyAt = 0;
    const delay = Math.min(BACKOFF_FIRST_MS * 2 ** this.#failures, BACKOFF_MAX_MS);
    this.#failures++;
    // a server that keeps failing the same way is logged less and less often
    if (reason !== this.error || (this.#failures & (this.#failures - 1)) === 0) {
      this.#warn(`mcp ${this.name}: ${reason}; retrying in ${delay / 1000} s`);
    }
    this.state = state;
    this.error = reason;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => void this.#connect(), delay);
  }

  async #refresh(generation: number, client: Client): Promise<void> {
    try {
      const tools = await listAllTools(client, this.timeoutMs);
      if (generation === this.#generation && this.state === "ready") this.hooks.tools(tools);
    } catch (e) {
      if (generation === this.#generation) this.#warn(`mcp ${this.name}: could not refresh its tools: ${message(e)}`);
    }
  }

  #warn(message: string): void {
    (this.hooks.warn ?? this.hooks.log)(message);
  }

  #startPing(generation: number, client: Client): void {
    this.#pingTimer = setInterval(() => {
      client.ping({ timeout: 10_000 }).catch((e) => {
        // an error the server answered with still shows it is there
        if (e instanceof McpError && e.code !== ErrorCode.RequestTimeout && e.code !== ErrorCode.ConnectionClosed) return;
        this.#lost(generation, `ping failed: ${message(e)}`);
      });
    }, HTTP_PING_MS);
    this.#pingTimer.unref?.();
  }

  /** Calls a tool of this server; fails at once when the server is not ready. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const client = this.#client;
    if (this.#stopped) throw new Error(`the MCP server ${this.name} has been shut down`);
    if (this.state !== "ready" || !client) {
      const state = { starting: "still starting", ready: "not connected", restarting: "restarting", failed: "down" }[this.state];
      throw new Error(`the MCP server ${this.name} is ${state}${this.error ? ` (${this.error})` : ""}; its tools work again once it is back`);
    }
    const generation = this.#generation;
    let result;
    try {
      result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: this.timeoutMs });
    } catch (e) {
      if (signal.aborted) throw e;
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
        throw new Error(`the MCP server ${this.name} did not answer within ${this.timeoutMs} ms; the call was cancelled`);
      }
      // over HTTP a failed request (refused, 5xx, unknown session) means the server has to be reconnected
      if (this.transportKind === "http" && !(e instanceof McpError)) this.#lost(generation, `request failed: ${message(e)}`);
      if (generation !== this.#generation) {
        throw new Error(`the MCP server ${this.name} went away during the call (${this.error}); it is being restarted`);
      }
      throw new Error(message(e));
    }
    return resultText(result);
  }

  /** Closes the client: ends the HTTP session, or stops the child process (SIGTERM, then SIGKILL). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#started();
    this.#generation++;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#pingTimer);
    const client = this.#client;
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    if (!client) return;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await Promise.race([transport.terminateSession().catch(() => {}), Bun.sleep(1_000)]);
    }
    await closeQuietly(client);
  }
}

async function listAllTools(client: Client, timeout: number): Promise<McpTool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function closeQuietly(client: Client): Promise<void> {
  await client.close().catch(() => {});
}
