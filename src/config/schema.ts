import { Type, type Static } from "@sinclair/typebox";
import { McpServers } from "./mcp";

export const ApprovalPolicy = Type.Union([Type.Literal("auto"), Type.Literal("ask"), Type.Literal("deny")]);
export type ApprovalPolicy = Static<typeof ApprovalPolicy>;

/** The one shape of the service's configuration; `config.json` holds any part of it. */
export const ConfigSchema = Type.Object({
  llm: Type.Object({
    baseUrl: Type.Optional(Type.String({ minLength: 1 })),
    apiKey: Type.Optional(Type.String()),
    model: Type.Optional(Type.String({ minLength: 1 })),
    /** Retries of a request that failed before any output (connection, 408, 409, 429, 5xx). */
    maxRetries: Type.Integer({ minimum: 0, maximum: 20 }),
    /** Endpoints tried in order once the primary's retries are spent. */
    fallbacks: Type.Array(
      Type.Object({
        baseUrl: Type.Optional(Type.String({ minLength: 1 })),
        apiKey: Type.Optional(Type.String()),
        model: Type.String({ minLength: 1 }),
      }),
    ),
    /** The model's context window, in tokens: every request fits in it less `maxOutputTokens`. */
    contextWindow: Type.Integer({ minimum: 1024 }),
    /** Tokens reserved for the model's answer in every request (at most half the window is). */
    maxOutputTokens: Type.Integer({ minimum: 16 }),
    /** A model for summarising old turns (compaction); the main model when unset. */
    compactionModel: Type.Optional(Type.String({ minLength: 1 })),
    /** Before compacting, one silent step in which the agent saves what should last to memory. */
    memoryFlush: Type.Boolean(),
  }),
  database: Type.Object({
    url: Type.Optional(Type.String({ minLength: 1 })),
    authToken: Type.Optional(Type.String()),
  }),
  gateway: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    authToken: Type.Optional(Type.String({ minLength: 1 })),
  }),
  cli: Type.Object({ enabled: Type.Boolean() }),
  http: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    webhookSecret: Type.Optional(Type.String({ minLength: 1 })),
    /** Hosts, IPs or CIDRs a job's callback_url may point at; empty refuses every callback. */
    callbackAllowHosts: Type.Array(Type.String()),
  }),
  responses: Type.Object({
    revision: Type.Union([Type.Literal("A"), Type.Literal("B")]),
    rateLimit: Type.Integer({ minimum: 0 }),
  }),
  agent: Type.Object({
    maxSteps: Type.Integer({ minimum: 1, maximum: 200 }),
    /** Timeout of webhook and /api/chat/send turns, in seconds. */
    turnTimeoutS: Type.Integer({ minimum: 1 }),
    /** On SIGTERM/SIGINT, how long running turns may finish before they are cut short (ms). */
    shutdownGraceMs: Type.Integer({ minimum: 0 }),
  }),
  mcp: Type.Object({
    /** How long a turn waits for configured MCP servers that are still starting. */
    startWaitMs: Type.Integer({ minimum: 0 }),
  }),
  log: Type.Object({
    /** `json`: one JSON object per line; `pretty`: text (the default on a terminal). */
    format: Type.Optional(Type.Union([Type.Literal("json"), Type.Literal("pretty")])),
    level: Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")]),
  }),
  memory: Type.Object({
    /** Embedding model on the LLM endpoint's /embeddings; without one, search is full-text only. */
    embeddingModel: Type.Optional(Type.String({ minLength: 1 })),
  }),
  tools: Type.Object({
    /** Approval policy per tool name; tools not listed run without asking. */
    approval: Type.Record(Type.String(), ApprovalPolicy),
    web: Type.Object({
      /** Lets web_fetch reach loopback, private and link-local addresses. */
      allowPrivate: Type.Boolean(),
      /** Host names web_fetch may reach even when they resolve to private addresses. */
      allowHosts: Type.Array(Type.String()),
      /** A SearXNG instance for web_search; without one, web_search is absent. */
      searchUrl: Type.Optional(Type.String({ minLength: 1 })),
    }),
  }),
  /** MCP servers by name: `{command, args, env}` (stdio) or `{url, headers}` (Streamable HTTP). */
  mcpServers: McpServers,
});
export type Config = Static<typeof ConfigSchema>;

export const DEFAULTS: Config = {
  llm: { maxRetries: 3, fallbacks: [], contextWindow: 32768, maxOutputTokens: 4096, memoryFlush: true },
  database: {},
  gateway: { enabled: true, host: "127.0.0.1", port: 3000 },
  cli: { enabled: true },
  http: { enabled: false, host: "0.0.0.0", port: 8080, callbackAllowHosts: [] },
  responses: { revision: "B", rateLimit: 30 },
  agent: { maxSteps: 16, turnTimeoutS: 600, shutdownGraceMs: 5_000 },
  mcp: { startWaitMs: 10_000 },
  log: { level: "info" },
  memory: {},
  tools: { approval: {}, web: { allowPrivate: false, allowHosts: [] } },
  mcpServers: {},
};

/** A partial config, as found in config.json, the environment or flags. */
export type ConfigLayer = { [K in keyof Config]?: DeepPartial<Config[K]> };
type DeepPartial<T> = T extends unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
