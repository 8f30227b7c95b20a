import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ConversationItem } from "../conversation/items";
import type { TurnErrorCode } from "../errors";
import type { CompactionItem } from "../conversation/items";
import type { ExternalTool } from "../conversation/items";
import type { GateData } from "../conversation/gates";

/** The `{code, message}` of a failed turn or job, as stored. */
export type StoredError = { code: string; message: string };

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email"),
  displayName: text("display_name"),
  status: text("status").notNull().default("active"),
  role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  /** What the user's turns may cost a day and a month (micro-USD); null: no budget of their own. */
  budgetDailyMicroUsd: integer("budget_daily_micro_usd"),
  budgetMonthlyMicroUsd: integer("budget_monthly_micro_usd"),
});

/** Per-user API tokens; only a SHA-256 hash is kept. */
export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    hash: text("hash").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("tokens_hash").on(t.hash)],
);

export const threads = sqliteTable(
  "threads",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    title: text("title"),
    /** The caller tool definitions last sent on this thread. */
    tools: text("tools", { mode: "json" }).$type<ExternalTool[]>(),
    /** The conversation's metadata (Conversations API): at most 16 string pairs. */
    metadata: text("metadata", { mode: "json" }).$type<Record<string, string>>(),
    /** The seq of the thread's latest `compaction` item, or null before its first compaction. */
    compactionSeq: integer("compaction_seq"),
    /** Items from this seq on follow the latest compaction verbatim: where a turn starts loading. */
    contextSeq: integer("context_seq").notNull().default(0),
    /** The channel that started the thread: responses, chat or webhook (null before it was kept). */
    channel: text("channel"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("threads_user").on(t.userId, t.updatedAt)],
);

/** One row per response (one POST on a thread). */
export const responses = sqliteTable(
  "responses",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    status: text("status", { enum: ["completed", "failed"] }).notNull(),
    model: text("model").notNull(),
    /** `{code, message}` when failed. */
    error: text("error", { mode: "json" }).$type<{ code: TurnErrorCode; message: string }>(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    /** Of the input tokens, those the provider read from its prompt cache. */
    cachedTokens: integer("cached_tokens").notNull().default(0),
    /** Of the output tokens, the model's reasoning. */
    reasoningTokens: integer("reasoning_tokens").notNull().default(0),
    costMicroUsd: integer("cost_micro_usd").notNull().default(0),
    /** Request facts the response object reports back (instructions, previous id, ...). */
    meta: text("meta", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull(),
    /** Set by DELETE /api/v1/responses/{id}: the response is gone, its items stay in the thread. */
    deletedAt: integer("deleted_at"),
    /** The job whose turn this is (a webhook job, a routine's run): a job run again finds its turn here. */
    jobId: text("job_id"),
  },
  (t) => [index("responses_thread").on(t.threadId), index("responses_job").on(t.jobId).where(sql`${t.jobId} is not null`)],
);

/**
 * The conversation: every item of a thread in order. `data` is the item's JSON
 * (message, function_call or function_call_output, see conversation/items.ts; or a `compaction`,
 * see conversation/items.ts, whose `response_id` is its own id: it belongs to no response).
 */
export const items = sqliteTable(
  "items",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    responseId: text("response_id").notNull(),
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).notNull().$type<ConversationItem | CompactionItem>(),
    /** Whether the item was input of its response (sent by the caller) rather than output. */
    input: integer("input", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("items_thread_seq").on(t.threadId, t.seq), index("items_response").on(t.responseId)],
);

/**
 * A thread paused on a gate: an external tool call, an approval or OAuth. (The spec also names
 * a pairing gate; nothing pairs devices yet, so nothing creates one.)
 */
export const gates = sqliteTable("gates", {
  threadId: text("thread_id")
    .primaryKey()
    .references(() => threads.id, { onDelete: "cascade" }),
  kind: text("kind", { enum: ["external_tool", "approval", "oauth"] }).notNull(),
  callId: text("call_id").notNull(),
  responseId: text("response_id").notNull(),
  /** What the gate needs to resume (e.g. the calls still pending after this one). */
  data: text("data", { mode: "json" }).notNull().$type<GateData>(),
  createdAt: integer("created_at").notNull(),
});

/** A user's own approval decisions ("always allow"), over the operator's configured policies. */
export const toolPolicies = sqliteTable(
  "tool_policies",
  {
    userId: text("user_id").notNull(),
    tool: text("tool").notNull(),
    policy: text("policy", { enum: ["auto", "ask", "deny"] }).notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.tool] })],
);

/** Work queued by a channel (the webhook): stored before it is acknowledged, run in order. */
export const jobs = sqliteTable(
  "jobs",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    /** The service user the job runs as. */
    userId: text("user_id").notNull(),
    source: text("source").notNull(),
    /** Who sent it, as the channel names them (the webhook's `user_id`). */
    sender: text("sender").notNull(),
    conversationId: text("conversation_id").notNull(),
    threadId: text("thread_id"),
    message: text("message").notNull(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    /** `waiting`: its turn stopped at a gate a person resolves (an approval); it goes on once they have. */
    status: text("status", { enum: ["queued", "running", "waiting", "completed", "failed"] }).notNull(),
    /** What a waiting job waits for. */
    waiting: text("waiting", { enum: ["approval", "oauth"] }),
    /**
     * Jobs of one lane run one at a time, in order; lanes run side by side (HTTP_JOB_CONCURRENCY).
     * A lane is a conversation: the user, the source, the sender and the conversation id.
     */
    lane: text("lane").notNull().default(""),
    /** `Idempotency-Key` (or `webhook-id`, a delivery id): one job per key and source within 24 h. */
    idempotencyKey: text("idempotency_key"),
    /** SHA-256 of the request body the key came with: the same key with another body is refused. */
    requestHash: text("request_hash"),
    /** A job queued again after a transient failure waits until then (ms since the epoch). */
    nextAttemptAt: integer("next_attempt_at"),
    /**
     * A running job is its process's until then (ms since the epoch); the process renews it
     * while the job runs. Past it, the process is taken for dead and the job is queued again
     * (PostgreSQL replicas; a libSQL file's one process queues its running jobs again at start).
     */
    leaseUntil: integer("lease_until"),
    /** Whether the job's message is the operator's own (`/webhook`, routines) or untrusted content (a named source unless configured `trusted`). */
    trusted: integer("trusted", { mode: "boolean" }).notNull().default(true),
    /** What of the user's memory the job's turn may use: `full`, `read` (read only) or `none` (named sources' `memory` setting). */
    memory: text("memory", { enum: ["full", "read", "none"] }).notNull().default("full"),
    response: text("response"),
    responseId: text("response_id"),
    error: text("error", { mode: "json" }).$type<StoredError>(),
    attempts: integer("attempts").notNull().default(0),
    /** Where the job record is POSTed when the job ends (see channels/webhook/callbacks.ts). */
    callbackUrl: text("callback_url"),
    callbackStatus: text("callback_status", { enum: ["pending", "delivered", "failed"] }),
    callbackAttempts: integer("callback_attempts").notNull().default(0),
    /** When the next delivery attempt is due (ms since the epoch); null: as soon as the job ends. */
    callbackNextAt: integer("callback_next_at"),
    createdAt: text("created_at").notNull(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
  },
  (t) => [
    uniqueIndex("jobs_id").on(t.id),
    index("jobs_status").on(t.status, t.seq),
    index("jobs_user").on(t.userId, t.seq),
    index("jobs_callback").on(t.callbackStatus),
    index("jobs_lane").on(t.lane, t.status, t.seq),
    index("jobs_retry").on(t.nextAttemptAt),
    uniqueIndex("jobs_idempotency").on(t.source, t.idempotencyKey),
  ],
);

/** Scheduled agent runs of a user (see src/routines/). */
export const routines = sqliteTable(
  "routines",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    /** A 5-field cron expression or `@daily`…, `every <n>s|m|h|d`, or `at <ISO 8601 time>`. */
    schedule: text("schedule").notNull(),
    /** The IANA time zone a cron expression (and an `at` time without an offset) is read in. */
    timezone: text("timezone").notNull(),
    prompt: text("prompt").notNull(),
    /** `new`: each run starts a conversation; `same`: every run continues the routine's one conversation. */
    conversation: text("conversation", { enum: ["new", "same"] }).notNull(),
    callbackUrl: text("callback_url"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** What ticks missed while the service was down become: all skipped, one run, or each run (at most 10). */
    catchUp: text("catch_up", { enum: ["skip", "one", "all"] }).notNull(),
    /** Where `every` counts from (ms since the epoch): its ticks are anchor + k × interval. */
    anchorAt: integer("anchor_at").notNull(),
    /** The next tick not yet recorded (ms since the epoch); null when paused or when an `at` has passed. */
    nextRunAt: integer("next_run_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("routines_user").on(t.userId), index("routines_due").on(t.enabled, t.nextRunAt)],
);

/**
 * One record per due tick of a routine (or per "run now"): ran (with its job) or skipped (with
 * the reason). The unique key makes a tick fire once, whatever restarts or replicas do.
 */
export const routineRuns = sqliteTable(
  "routine_runs",
  {
    id: text("id").primaryKey(),
    routineId: text("routine_id")
      .notNull()
      .references(() => routines.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    /** The tick's time (ms since the epoch); for a run asked for by hand, when it was asked. */
    scheduledFor: integer("scheduled_for").notNull(),
    trigger: text("trigger", { enum: ["schedule", "manual"] }).notNull(),
    /** When the run was recorded (its job queued), ISO 8601. */
    startedAt: text("started_at").notNull(),
    outcome: text("outcome", { enum: ["ran", "skipped"] }).notNull(),
    /** Why a tick was skipped: `missed` (the service was down), `overlap` (the previous run was still going). */
    reason: text("reason"),
    jobId: text("job_id"),
  },
  (t) => [uniqueIndex("routine_runs_tick").on(t.routineId, t.trigger, t.scheduledFor), index("routine_runs_user").on(t.userId)],
);

/**
 * What each turn cost, one row per model that answered in it: kept apart from the response,
 * so that a turn with `store: false` counts, and deleting a thread does not refund its spending.
 * `day` is the local date the turn ended (YYYY-MM-DD): days and months of budgets and reports.
 */
export const turnUsage = sqliteTable(
  "turn_usage",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    responseId: text("response_id").notNull(),
    userId: text("user_id").notNull(),
    threadId: text("thread_id").notNull(),
    /** responses, chat or webhook. */
    channel: text("channel").notNull(),
    /** The routine whose run the turn was, if any. */
    routineId: text("routine_id"),
    /** The LLM model that answered, as priced. */
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    cachedTokens: integer("cached_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    reasoningTokens: integer("reasoning_tokens").notNull(),
    costMicroUsd: integer("cost_micro_usd").notNull(),
    day: text("day").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("turn_usage_day").on(t.day), index("turn_usage_user_day").on(t.userId, t.day)],
);

/**
 * Turn-starting requests counted against the Responses rate limit, one row each, when
 * replicas share the database (PostgreSQL): one budget whichever replica a request reaches.
 * A single process counts in memory and leaves this table empty.
 */
export const rateEvents = sqliteTable(
  "rate_events",
  {
    key: text("key").notNull(),
    /** ms since the epoch. */
    at: integer("at").notNull(),
  },
  (t) => [index("rate_events_key").on(t.key, t.at)],
);

/** Workspace memory: one text document per user and path (see src/memory/). */
export const memoryDocuments = sqliteTable(
  "memory_documents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: text("user_id").notNull(),
    path: text("path").notNull(),
    content: text("content").notNull(),
    /** UTF-8 bytes of `content`. */
    size: integer("size").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Written by the agent in a turn that had read untrusted content: read back as untrusted. */
    tainted: integer("tainted", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [uniqueIndex("memory_documents_user_path").on(t.userId, t.path)],
);

/**
 * Files the agent wrote in a user's files folder, by the hash of what it wrote: a file whose
 * content is not one of these (put there by anyone else, or changed since) is untrusted when
 * the agent reads it, and so is one written in a tainted turn.
 */
export const agentFiles = sqliteTable(
  "agent_files",
  {
    userId: text("user_id").notNull(),
    path: text("path").notNull(),
    sha256: text("sha256").notNull(),
    tainted: integer("tainted", { mode: "boolean" }).notNull(),
    writtenAt: integer("written_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.path] })],
);

/** Every call that could carry data out of the box and ran: what, where to, in which turn, approved how. */
export const egressLog = sqliteTable(
  "egress_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: text("user_id").notNull(),
    threadId: text("thread_id").notNull(),
    responseId: text("response_id").notNull(),
    tool: text("tool").notNull(),
    destination: text("destination").notNull(),
    /** Why it could go: the turn was untainted, the allow list, the user's own words, the user's approval… */
    approvedBy: text("approved_by").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("egress_log_user").on(t.userId, t.id)],
);

/**
 * The searchable pieces of a document. The full-text index `memory_fts` (FTS5, external
 * content) follows this table through triggers; vectors live in `memory_vectors_<dims>`,
 * created at run time once the embedding model's dimensions are known.
 */
export const memoryChunks = sqliteTable(
  "memory_chunks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    documentId: integer("document_id")
      .notNull()
      .references(() => memoryDocuments.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    /** The user's number in memory_owners: indexed in memory_fts, so a search is one FTS5 query. */
    owner: integer("owner").notNull().default(0),
    seq: integer("seq").notNull(),
    text: text("text").notNull(),
  },
  (t) => [uniqueIndex("memory_chunks_document_seq").on(t.documentId, t.seq), index("memory_chunks_user").on(t.userId)],
);

/**
 * A number per user with memory, never reused. memory_fts indexes it as a column of each
 * chunk (digits are one token that stemming leaves alone), so that "this user's chunks"
 * is part of the full-text query itself rather than a join over every match.
 */
export const memoryOwners = sqliteTable(
  "memory_owners",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: text("user_id").notNull(),
  },
  (t) => [uniqueIndex("memory_owners_user").on(t.userId)],
);

/**
 * Credentials of installed extensions, encrypted at rest (AES-256-GCM, see
 * extensions/secret-box.ts). An API key is the instance's (`user_id` ""); OAuth tokens are
 * each user's own.
 */
export const extensionCredentials = sqliteTable(
  "extension_credentials",
  {
    extension: text("extension").notNull(),
    userId: text("user_id").notNull(),
    kind: text("kind", { enum: ["api_key", "oauth2"] }).notNull(),
    /** Ciphertext of the key, or of the token set's JSON. */
    secret: text("secret").notNull(),
    /** When an OAuth access token expires (ms since the epoch), if the server said. */
    expiresAt: integer("expires_at"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.extension, t.userId] })],
);

/** OAuth authorizations under way: the state sent to the authorization server and its PKCE verifier. */
export const oauthStates = sqliteTable("oauth_states", {
  /** SHA-256 of the state parameter: the state itself is not kept. */
  stateHash: text("state_hash").primaryKey(),
  extension: text("extension").notNull(),
  userId: text("user_id").notNull(),
  /** The PKCE code_verifier, encrypted. */
  verifier: text("verifier").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** Sessions of people signed in through an identity provider (SSO): only a SHA-256 hash of the bearer is kept. */
export const ssoSessions = sqliteTable(
  "sso_sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    hash: text("hash").notNull(),
    /** The provider the person signed in with: `google`, `github` or `oidc`. */
    provider: text("provider").notNull(),
    createdAt: integer("created_at").notNull(),
    /** ms since the epoch; the bearer is refused from then on. */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [uniqueIndex("sso_sessions_hash").on(t.hash), index("sso_sessions_user").on(t.userId)],
);

/** Which providers a user has signed in with, and as whom (the admin users list shows it). */
export const ssoIdentities = sqliteTable(
  "sso_identities",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    /** The provider's stable id of the person (`sub`, GitHub's numeric id). */
    subject: text("subject").notNull(),
    email: text("email").notNull(),
    lastSignInAt: integer("last_sign_in_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.provider] })],
);

/**
 * The branches of a thread kept aside: when a person regenerates an answer or edits their
 * last message, the thread's tail from that message on moves here, and the new answer takes
 * its place in `items` (which holds only the current branch, so the model reads only that).
 * A fork is named by the item before it (`fork`, "" at the thread's start); `branch` numbers
 * the alternatives there in the order they were made, from 1. Rows are `items` rows.
 */
export const branchItems = sqliteTable(
  "branch_items",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    fork: text("fork").notNull(),
    branch: integer("branch").notNull(),
    responseId: text("response_id").notNull(),
    /** Its seq when it was last on the current branch (renumbered when it comes back). */
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).notNull().$type<ConversationItem | CompactionItem>(),
    input: integer("input", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("branch_items_fork").on(t.threadId, t.fork, t.branch)],
);

/** The forks of a thread: how many alternatives each has, and which one is current. */
export const forks = sqliteTable(
  "forks",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    fork: text("fork").notNull(),
    current: integer("current").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.fork] })],
);
