import { Type, type Static } from "@sinclair/typebox";
import { McpServers } from "./mcp";

export const ApprovalPolicy = Type.Union([Type.Literal("auto"), Type.Literal("ask"), Type.Literal("deny")]);
export type ApprovalPolicy = Static<typeof ApprovalPolicy>;

/** A named webhook source: `POST /webhook/{name}` with its own secret, verification and template (see channels/webhook/sources.ts). */
export const WebhookSource = Type.Object(
  {
    secret: Type.String({ minLength: 16 }),
    verify: Type.Union([Type.Literal("secret"), Type.Literal("github"), Type.Literal("gitea"), Type.Literal("standard")]),
    /** Liquid templates over the delivery (`body`, `headers`, `event`, `source`) giving the job's fields. */
    template: Type.Optional(
      Type.Object(
        { message: Type.Optional(Type.String()), user_id: Type.Optional(Type.String()), conversation_id: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    /** The source's messages are the operator's own, not untrusted content (default false). */
    trusted: Type.Optional(Type.Boolean()),
    /** What of the owner's memory its jobs may use: `none` (default) or `read`. */
    memory: Type.Optional(Type.Union([Type.Literal("none"), Type.Literal("read")])),
  },
  { additionalProperties: false },
);
export type WebhookSource = Static<typeof WebhookSource>;

/**
 * The one shape of the service's configuration; `config.json` holds any part of it. Every key
 * carries a `description` and, when the environment can set it, its variable (`env`); the
 * configuration reference of docs/configuration.md is written from them
 * (scripts/config-reference.ts).
 * `defaultText` stands for a default that is not a value of DEFAULTS.
 */
export const ConfigSchema = Type.Object({
  llm: Type.Object(
    {
      baseUrl: Type.Optional(
        Type.String({ minLength: 1, env: "LLM_BASE_URL", defaultText: "`OPENAI_BASE_URL`", description: "OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, ...); with only a key set, the OpenAI API" }),
      ),
      apiKey: Type.Optional(Type.String({ env: "LLM_API_KEY", defaultText: "`OPENAI_API_KEY`", description: "the endpoint's API key" })),
      model: Type.Optional(Type.String({ minLength: 1, env: "LLM_MODEL", description: "the model sent to the provider" })),
      maxRetries: Type.Integer({
        minimum: 0,
        maximum: 20,
        env: "LLM_MAX_RETRIES",
        description: "retries of a request that failed before any output (connection error, 408, 409, 429, 5xx), with backoff",
      }),
      maxConcurrent: Type.Integer({
        minimum: 1,
        maximum: 60_000,
        env: "LLM_MAX_CONCURRENT",
        description:
          "model requests streaming at once (turns' steps and summaries; not the `/v1/chat/completions` proxy); past it a step waits for one to end (logged once per wait, counted in `GET /api/status` under `llm.streams`)",
      }),
      fallbacks: Type.Array(
        Type.Object({
          baseUrl: Type.Optional(Type.String({ minLength: 1 })),
          apiKey: Type.Optional(Type.String()),
          model: Type.String({ minLength: 1 }),
        }),
        { description: "`[{baseUrl, apiKey, model}]`: endpoints tried in order once the primary's retries are spent (config.json only)" },
      ),
      contextWindow: Type.Optional(
        Type.Integer({
          minimum: 1024,
          env: "LLM_CONTEXT_WINDOW",
          defaultText: "read from the server, else `32768`",
          description:
            "the model's context window in tokens: every request fits in it less `maxOutputTokens`; unset, it is read at start from llama.cpp, Ollama (its num_ctx), LM Studio, vLLM or OpenRouter",
        }),
      ),
      maxOutputTokens: Type.Integer({ minimum: 16, env: "LLM_MAX_OUTPUT_TOKENS", description: "tokens reserved for the model's answer in every request (at most half the window is)" }),
      compactionModel: Type.Optional(
        Type.String({ minLength: 1, env: "LLM_COMPACTION_MODEL", defaultText: "`model`", description: "a model for summarising old turns (compaction)" }),
      ),
      memoryFlush: Type.Boolean({
        env: "LLM_MEMORY_FLUSH",
        description: "before compacting, one silent step in which the agent saves what should last to memory",
      }),
      prices: Type.Record(
        Type.String(),
        Type.Object({
          input_per_mtok: Type.Number({ minimum: 0 }),
          output_per_mtok: Type.Number({ minimum: 0 }),
          cached_input_per_mtok: Type.Optional(Type.Number({ minimum: 0 })),
        }),
        {
          description:
            '`{"<model>": {input_per_mtok, output_per_mtok, cached_input_per_mtok}}`: USD per million tokens, for what turns cost; a cost the provider reports (OpenRouter\'s `usage.cost`) wins (config.json only)',
        },
      ),
    },
    { description: "the LLM" },
  ),
  budgets: Type.Object(
    {
      monthlyUsd: Type.Optional(
        Type.Number({
          minimum: 0,
          env: "BUDGET_MONTHLY_USD",
          description: "what all turns of the instance may cost a calendar month (USD); a turn that would start over it fails with `budget_exceeded`",
        }),
      ),
    },
    { description: "spending limits (per-user ones are set through the admin API)" },
  ),
  metrics: Type.Object(
    {
      enabled: Type.Boolean({ env: "METRICS_ENABLED", description: "`GET /metrics` in the Prometheus text format" }),
      token: Type.Optional(
        Type.String({ minLength: 1, env: "METRICS_TOKEN", defaultText: "the instance token", description: "the bearer token `GET /metrics` asks for" }),
      ),
    },
    { description: "Prometheus metrics" },
  ),
  telemetry: Type.Object(
    {
      otlpEndpoint: Type.Optional(
        Type.String({
          minLength: 1,
          env: "OTEL_EXPORTER_OTLP_ENDPOINT",
          description: "an OpenTelemetry collector (`http://host:4318`): traces of turns, LLM requests and tool calls go to `<endpoint>/v1/traces` over OTLP/HTTP",
        }),
      ),
      serviceName: Type.String({ minLength: 1, env: "OTEL_SERVICE_NAME", description: "the `service.name` the traces carry" }),
    },
    { description: "OpenTelemetry traces" },
  ),
  database: Type.Object(
    {
      url: Type.Optional(
        Type.String({
          minLength: 1,
          env: "DATABASE_URL",
          defaultText: "`file:$SERVICE_HOME/service.db`",
          description:
            "libSQL URL: a local file, or `libsql://` / `http(s)://` for a libSQL server; or `postgres://user:password@host:port/database` for a PostgreSQL server that any number of `serve` replicas share",
        }),
      ),
      authToken: Type.Optional(Type.String({ env: "DATABASE_AUTH_TOKEN", description: "token for a remote libSQL server" })),
    },
    { description: "the database" },
  ),
  gateway: Type.Object(
    {
      enabled: Type.Boolean({ env: "GATEWAY_ENABLED", description: "the gateway listener: Responses API, admin, local endpoints and the web UI" }),
      host: Type.String({ minLength: 1, env: "GATEWAY_HOST", description: "the interface the gateway listens on" }),
      port: Type.Integer({ minimum: 0, maximum: 65535, env: "GATEWAY_PORT", description: "the gateway's port (0 picks a free one)" }),
      authToken: Type.Optional(
        Type.String({
          minLength: 1,
          env: "GATEWAY_AUTH_TOKEN",
          description: "instance token when `SERVICE_REBORN_WEBUI_TOKEN` is unset (then the `webui-token` file, then one generated at start)",
        }),
      ),
    },
    { description: "the web gateway" },
  ),
  cli: Type.Object(
    { enabled: Type.Boolean({ env: "CLI_ENABLED", description: "the terminal UI inside `serve` when stdin and stdout are terminals" }) },
    { description: "the terminal UI" },
  ),
  http: Type.Object(
    {
      enabled: Type.Boolean({ env: "HTTP_ENABLED", description: "the webhook channel, on its own listener" }),
      host: Type.String({ minLength: 1, env: "HTTP_HOST", description: "the webhook listener's interface" }),
      port: Type.Integer({ minimum: 0, maximum: 65535, env: "HTTP_PORT", description: "the webhook listener's port" }),
      webhookSecret: Type.Optional(
        Type.String({ minLength: 1, env: "HTTP_WEBHOOK_SECRET", description: "shared secret of the webhook channel (at least 16 characters); it also signs callbacks" }),
      ),
      callbackAllowHosts: Type.Array(Type.String(), {
        env: "HTTP_CALLBACK_ALLOW_HOSTS",
        description: "host names (`*.example.com`), IPs or CIDRs a job's `callback_url` may point at, each with an optional `:port` (without one, any port), comma-separated; empty refuses every callback",
      }),
      jobConcurrency: Type.Integer({
        minimum: 1,
        maximum: 64,
        env: "HTTP_JOB_CONCURRENCY",
        description: "jobs (webhook and routine) of different conversations that run at once; one conversation's jobs run in order",
      }),
      jobMaxAttempts: Type.Integer({
        minimum: 1,
        maximum: 20,
        env: "HTTP_JOB_MAX_ATTEMPTS",
        description: "runs of a job whose turn fails for a transient reason (the LLM unreachable, 429 or 5xx), 30 s, 2 min, then 10 min apart",
      }),
      jobLeaseS: Type.Integer({
        minimum: 2,
        maximum: 3600,
        env: "HTTP_JOB_LEASE_S",
        description:
          "how long a running job stays its replica's without word from it: a replica renews it while the job runs; one that died (PostgreSQL, several replicas) leaves it to be taken over once it has run out",
      }),
      sources: Type.Record(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$" }), WebhookSource, {
        description:
          "named sources by name: `POST /webhook/{name}` with `{secret, verify: secret|github|gitea|standard, template: {message, user_id, conversation_id}, trusted, memory: none|read}`; see Webhook channel (config.json only)",
      }),
    },
    { description: "the webhook channel" },
  ),
  responses: Type.Object(
    {
      revision: Type.Union([Type.Literal("A"), Type.Literal("B")], { env: "RESPONSES_API_REVISION", description: "which revision of the Responses contract is served" }),
      rateLimit: Type.Integer({
        minimum: 0,
        env: "RESPONSES_RATE_LIMIT",
        description: "turns per 60 s per user (Responses POST and `/api/chat/send`); 0 is off",
      }),
      turnTimeoutS: Type.Optional(
        Type.Integer({
          minimum: 1,
          env: "RESPONSES_TURN_TIMEOUT_S",
          defaultText: "`30` (revision B), `120` (revision A)",
          description: "timeout of a non-streaming Responses turn and of `POST /api/chat`, in seconds (a slow CPU-only model may need more)",
        }),
      ),
    },
    { description: "the Responses API" },
  ),
  agent: Type.Object(
    {
      maxSteps: Type.Integer({ minimum: 1, maximum: 200, env: "AGENT_MAX_STEPS", description: "model steps per turn before it fails with `max_steps`" }),
      turnTimeoutS: Type.Integer({ minimum: 1, env: "TURN_TIMEOUT_S", description: "timeout of webhook and `/api/chat/send` turns, in seconds" }),
      shutdownGraceMs: Type.Integer({
        minimum: 0,
        env: "SHUTDOWN_GRACE_MS",
        description: "on SIGTERM/SIGINT, how long running turns may finish before they are cut short (ms)",
      }),
    },
    { description: "the agent" },
  ),
  mcp: Type.Object(
    {
      startWaitMs: Type.Integer({ minimum: 0, env: "MCP_START_WAIT_MS", description: "how long a turn waits for configured MCP servers that are still starting (ms)" }),
    },
    { description: "MCP servers" },
  ),
  log: Type.Object(
    {
      format: Type.Union([Type.Literal("json"), Type.Literal("pretty")], {
        env: "LOG_FORMAT",
        description: "`json`: one JSON object per line (`ts`, `level`, `msg`, fields); `pretty`: text for people",
      }),
      level: Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")], {
        env: "LOG_LEVEL",
        description: "the least level written: `debug`, `info`, `warn` or `error`",
      }),
    },
    { description: "the log" },
  ),
  memory: Type.Object(
    {
      embeddingModel: Type.Optional(
        Type.String({
          minLength: 1,
          env: "LLM_EMBEDDING_MODEL",
          description: "embedding model on the LLM endpoint's `/embeddings`; with it memory search is hybrid, without it full-text",
        }),
      ),
    },
    { description: "workspace memory" },
  ),
  tools: Type.Object(
    {
      approval: Type.Record(Type.String(), ApprovalPolicy, {
        description:
          "approval policy per tool name or `*` glob (`mcp__fs__*`): `auto`, `ask` or `deny`; the most specific pattern wins (the exact name, then the longest glob); see Safety",
      }),
      ask: Type.Array(Type.String({ minLength: 1 }), {
        env: "TOOLS_ASK",
        description: "tool names or `*` globs that ask for approval before they run, comma-separated; never lifts a `deny` of `approval`",
      }),
      web: Type.Object(
        {
          allowPrivate: Type.Boolean({
            env: "WEB_FETCH_ALLOW_PRIVATE",
            description: "let `web_fetch` reach loopback, private and link-local addresses",
          }),
          allowHosts: Type.Array(Type.String(), {
            env: "WEB_FETCH_ALLOW_HOSTS",
            description: "host names `web_fetch` may reach even on private addresses, comma-separated",
          }),
          searchUrl: Type.Optional(Type.String({ minLength: 1, env: "WEB_SEARCH_URL", description: "a SearXNG instance; without it there is no `web_search` tool" })),
        },
        { description: "the web tools" },
      ),
      egress: Type.Object(
        {
          allow: Type.Array(Type.String({ minLength: 1 }), {
            env: "TOOLS_EGRESS_ALLOW",
            description:
              "destinations a call may send data to without asking even after the turn read untrusted content: host names or `*` globs (`*.example.com`), `mcp:<server>`, `extension:<name>`, comma-separated; see Security",
          }),
        },
        { description: "where data may go out of the box" },
      ),
    },
    { description: "built-in tools" },
  ),
  auth: Type.Object(
    {
      sso: Type.Object(
        {
          google: Type.Optional(
            Type.Object(
              {
                clientId: Type.String({ minLength: 1, description: "the OAuth client ID of a Google Cloud \"Web application\" client" }),
                clientSecret: Type.String({ minLength: 1, description: "its client secret" }),
                name: Type.Optional(Type.String({ minLength: 1, defaultText: "`Google`", description: "the button's name on the sign-in card" })),
                issuer: Type.Optional(Type.String({ minLength: 1, defaultText: "`https://accounts.google.com`", description: "Google's issuer (tests point it elsewhere)" })),
              },
              { description: "sign-in with Google (OpenID Connect)" },
            ),
          ),
          github: Type.Optional(
            Type.Object(
              {
                clientId: Type.String({ minLength: 1, description: "the Client ID of a GitHub OAuth app" }),
                clientSecret: Type.String({ minLength: 1, description: "its client secret" }),
                name: Type.Optional(Type.String({ minLength: 1, defaultText: "`GitHub`", description: "the button's name on the sign-in card" })),
                authorizeUrl: Type.Optional(Type.String({ minLength: 1, defaultText: "`https://github.com/login/oauth/authorize`", description: "GitHub's authorization endpoint" })),
                tokenUrl: Type.Optional(Type.String({ minLength: 1, defaultText: "`https://github.com/login/oauth/access_token`", description: "GitHub's token endpoint" })),
                apiUrl: Type.Optional(
                  Type.String({ minLength: 1, defaultText: "`https://api.github.com`", description: "GitHub's REST API (`/user`, `/user/emails`); GitHub Enterprise: `https://HOST/api/v3`" }),
                ),
              },
              { description: "sign-in with GitHub (OAuth 2.0; the person's verified emails)" },
            ),
          ),
          oidc: Type.Optional(
            Type.Object(
              {
                issuer: Type.String({ minLength: 1, description: "the issuer URL, exactly as the provider's discovery document says it (Authelia, Authentik, Keycloak, Pocket ID, …)" }),
                clientId: Type.String({ minLength: 1, description: "the client ID registered there" }),
                clientSecret: Type.String({ minLength: 1, description: "its client secret" }),
                name: Type.Optional(Type.String({ minLength: 1, defaultText: "`Single sign-on`", description: "the button's name on the sign-in card" })),
              },
              { description: "sign-in with any OpenID Connect provider, found by discovery" },
            ),
          ),
          publicUrl: Type.Optional(
            Type.String({
              minLength: 1,
              defaultText: "the gateway's address",
              description: "the service's address as browsers reach it (`https://agent.example.com`): redirect URIs are `<publicUrl>/auth/sso/<provider>/callback`",
            }),
          ),
          allowedDomains: Type.Array(Type.String({ minLength: 1 }), {
            description: "email domains that may sign in (`[\"example.com\"]`); empty lets any verified email through to the user check",
          }),
          autoCreate: Type.Boolean({ description: "create a `member` for a verified email that no user has yet, at its first sign-in" }),
          sessionDays: Type.Integer({ minimum: 1, maximum: 3650, description: "how long a sign-in lasts, in days" }),
        },
        { description: "single sign-on (config.json only)" },
      ),
    },
    { description: "authentication" },
  ),
  mcpServers: McpServers,
});
export type Config = Static<typeof ConfigSchema>;

export const DEFAULTS: Config = {
  llm: { maxRetries: 3, maxConcurrent: 1024, fallbacks: [], maxOutputTokens: 4096, memoryFlush: true, prices: {} },
  budgets: {},
  metrics: { enabled: false },
  telemetry: { serviceName: "service" },
  database: {},
  gateway: { enabled: true, host: "127.0.0.1", port: 3000 },
  cli: { enabled: true },
  http: { enabled: false, host: "0.0.0.0", port: 8080, callbackAllowHosts: [], jobConcurrency: 4, jobMaxAttempts: 3, jobLeaseS: 30, sources: {} },
  responses: { revision: "B", rateLimit: 30 },
  agent: { maxSteps: 16, turnTimeoutS: 600, shutdownGraceMs: 5_000 },
  mcp: { startWaitMs: 10_000 },
  log: { format: "pretty", level: "info" },
  memory: {},
  tools: { approval: {}, ask: [], web: { allowPrivate: false, allowHosts: [] }, egress: { allow: [] } },
  auth: { sso: { allowedDomains: [], autoCreate: false, sessionDays: 30 } },
  mcpServers: {},
};

/** A partial config, as found in config.json, the environment or flags. */
export type ConfigLayer = { [K in keyof Config]?: DeepPartial<Config[K]> };
type DeepPartial<T> = T extends unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** The spec's timeout of a non-streaming Responses turn, per revision. */
export const RESPONSES_TURN_TIMEOUT_MS = { A: 120_000, B: 30_000 } as const;

/** The non-streaming Responses (and `POST /api/chat`) turn timeout: `responses.turnTimeoutS`, else the revision's. */
export const responsesTurnTimeoutMs = (r: Config["responses"]) => (r.turnTimeoutS !== undefined ? r.turnTimeoutS * 1000 : RESPONSES_TURN_TIMEOUT_MS[r.revision]);
