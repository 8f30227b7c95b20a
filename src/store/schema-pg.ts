// The PostgreSQL twin of schema.ts: the same tables, columns and indexes, column for column
// (tests/store/schemas.test.ts holds them in step). What each column means is said there.
// SQLite's integers are 64-bit, so every integer is a bigint read as a JS number; JSON text
// is json (kept as written, like SQLite's text); 0/1 flags are booleans.
import { sql } from "drizzle-orm";
import { bigint, boolean, index, json, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { CompactionItem, ConversationItem, ExternalTool } from "../conversation/items";
import type { TurnErrorCode } from "../errors";
import type { StoredError } from "./schema";
import type { GateData } from "../conversation/gates";

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  email: text("email"),
  displayName: text("display_name"),
  status: text("status").notNull().default("active"),
  role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  budgetDailyMicroUsd: bigint("budget_daily_micro_usd", { mode: "number" }),
  budgetMonthlyMicroUsd: bigint("budget_monthly_micro_usd", { mode: "number" }),
});

export const tokens = pgTable(
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

export const threads = pgTable(
  "threads",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    title: text("title"),
    tools: json("tools").$type<ExternalTool[]>(),
    metadata: json("metadata").$type<Record<string, string>>(),
    compactionSeq: bigint("compaction_seq", { mode: "number" }),
    contextSeq: bigint("context_seq", { mode: "number" }).notNull().default(0),
    channel: text("channel"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("threads_user").on(t.userId, t.updatedAt)],
);

export const responses = pgTable(
  "responses",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    status: text("status", { enum: ["completed", "failed"] }).notNull(),
    model: text("model").notNull(),
    error: json("error").$type<{ code: TurnErrorCode; message: string }>(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    cachedTokens: bigint("cached_tokens", { mode: "number" }).notNull().default(0),
    reasoningTokens: bigint("reasoning_tokens", { mode: "number" }).notNull().default(0),
    costMicroUsd: bigint("cost_micro_usd", { mode: "number" }).notNull().default(0),
    meta: json("meta").$type<Record<string, unknown>>(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    deletedAt: bigint("deleted_at", { mode: "number" }),
    jobId: text("job_id"),
  },
  (t) => [index("responses_thread").on(t.threadId), index("responses_job").on(t.jobId).where(sql`${t.jobId} is not null`)],
);

export const items = pgTable(
  "items",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    responseId: text("response_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    type: text("type").notNull(),
    data: json("data").notNull().$type<ConversationItem | CompactionItem>(),
    input: boolean("input").notNull().default(false),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("items_thread_seq").on(t.threadId, t.seq), index("items_response").on(t.responseId)],
);

export const gates = pgTable("gates", {
  threadId: text("thread_id")
    .primaryKey()
    .references(() => threads.id, { onDelete: "cascade" }),
  kind: text("kind", { enum: ["external_tool", "approval", "oauth"] }).notNull(),
  callId: text("call_id").notNull(),
  responseId: text("response_id").notNull(),
  data: json("data").notNull().$type<GateData>(),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
});

export const toolPolicies = pgTable(
  "tool_policies",
  {
    userId: text("user_id").notNull(),
    tool: text("tool").notNull(),
    policy: text("policy", { enum: ["auto", "ask", "deny"] }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.tool] })],
);

export const jobs = pgTable(
  "jobs",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    userId: text("user_id").notNull(),
    source: text("source").notNull(),
    sender: text("sender").notNull(),
    conversationId: text("conversation_id").notNull(),
    threadId: text("thread_id"),
    message: text("message").notNull(),
    metadata: json("metadata").$type<Record<string, unknown>>(),
    status: text("status", { enum: ["queued", "running", "waiting", "completed", "failed"] }).notNull(),
    waiting: text("waiting", { enum: ["approval", "oauth"] }),
    lane: text("lane").notNull().default(""),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }),
    leaseUntil: bigint("lease_until", { mode: "number" }),
    trusted: boolean("trusted").notNull().default(true),
    memory: text("memory", { enum: ["full", "read", "none"] }).notNull().default("full"),
    response: text("response"),
    responseId: text("response_id"),
    error: json("error").$type<StoredError>(),
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    callbackUrl: text("callback_url"),
    callbackStatus: text("callback_status", { enum: ["pending", "delivered", "failed"] }),
    callbackAttempts: bigint("callback_attempts", { mode: "number" }).notNull().default(0),
    callbackNextAt: bigint("callback_next_at", { mode: "number" }),
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

export const routines = pgTable(
  "routines",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    schedule: text("schedule").notNull(),
    timezone: text("timezone").notNull(),
    prompt: text("prompt").notNull(),
    conversation: text("conversation", { enum: ["new", "same"] }).notNull(),
    callbackUrl: text("callback_url"),
    enabled: boolean("enabled").notNull(),
    catchUp: text("catch_up", { enum: ["skip", "one", "all"] }).notNull(),
    anchorAt: bigint("anchor_at", { mode: "number" }).notNull(),
    nextRunAt: bigint("next_run_at", { mode: "number" }),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("routines_user").on(t.userId), index("routines_due").on(t.enabled, t.nextRunAt)],
);

export const routineRuns = pgTable(
  "routine_runs",
  {
    id: text("id").primaryKey(),
    routineId: text("routine_id")
      .notNull()
      .references(() => routines.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    scheduledFor: bigint("scheduled_for", { mode: "number" }).notNull(),
    trigger: text("trigger", { enum: ["schedule", "manual"] }).notNull(),
    startedAt: text("started_at").notNull(),
    outcome: text("outcome", { enum: ["ran", "skipped"] }).notNull(),
    reason: text("reason"),
    jobId: text("job_id"),
  },
  (t) => [uniqueIndex("routine_runs_tick").on(t.routineId, t.trigger, t.scheduledFor), index("routine_runs_user").on(t.userId)],
);

export const turnUsage = pgTable(
  "turn_usage",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    responseId: text("response_id").notNull(),
    userId: text("user_id").notNull(),
    threadId: text("thread_id").notNull(),
    channel: text("channel").notNull(),
    routineId: text("routine_id"),
    model: text("model").notNull(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull(),
    cachedTokens: bigint("cached_tokens", { mode: "number" }).notNull(),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull(),
    reasoningTokens: bigint("reasoning_tokens", { mode: "number" }).notNull(),
    costMicroUsd: bigint("cost_micro_usd", { mode: "number" }).notNull(),
    day: text("day").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("turn_usage_day").on(t.day), index("turn_usage_user_day").on(t.userId, t.day)],
);

export const rateEvents = pgTable(
  "rate_events",
  {
    key: text("key").notNull(),
    at: bigint("at", { mode: "number" }).notNull(),
  },
  (t) => [index("rate_events_key").on(t.key, t.at)],
);

export const memoryDocuments = pgTable(
  "memory_documents",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    path: text("path").notNull(),
    content: text("content").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    tainted: boolean("tainted").notNull().default(false),
  },
  (t) => [uniqueIndex("memory_documents_user_path").on(t.userId, t.path)],
);

export const agentFiles = pgTable(
  "agent_files",
  {
    userId: text("user_id").notNull(),
    path: text("path").notNull(),
    sha256: text("sha256").notNull(),
    tainted: boolean("tainted").notNull(),
    writtenAt: bigint("written_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.path] })],
);

export const egressLog = pgTable(
  "egress_log",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    threadId: text("thread_id").notNull(),
    responseId: text("response_id").notNull(),
    tool: text("tool").notNull(),
    destination: text("destination").notNull(),
    approvedBy: text("approved_by").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("egress_log_user").on(t.userId, t.id)],
);

export const memoryChunks = pgTable(
  "memory_chunks",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    documentId: bigint("document_id", { mode: "number" })
      .notNull()
      .references(() => memoryDocuments.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    owner: bigint("owner", { mode: "number" }).notNull().default(0),
    seq: bigint("seq", { mode: "number" }).notNull(),
    text: text("text").notNull(),
  },
  (t) => [uniqueIndex("memory_chunks_document_seq").on(t.documentId, t.seq), index("memory_chunks_user").on(t.userId)],
);

export const memoryOwners = pgTable(
  "memory_owners",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
  },
  (t) => [uniqueIndex("memory_owners_user").on(t.userId)],
);

export const extensionCredentials = pgTable(
  "extension_credentials",
  {
    extension: text("extension").notNull(),
    userId: text("user_id").notNull(),
    kind: text("kind", { enum: ["api_key", "oauth2"] }).notNull(),
    secret: text("secret").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.extension, t.userId] })],
);

export const oauthStates = pgTable("oauth_states", {
  stateHash: text("state_hash").primaryKey(),
  extension: text("extension").notNull(),
  userId: text("user_id").notNull(),
  verifier: text("verifier").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
});

export const ssoSessions = pgTable(
  "sso_sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    hash: text("hash").notNull(),
    provider: text("provider").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("sso_sessions_hash").on(t.hash), index("sso_sessions_user").on(t.userId)],
);

export const ssoIdentities = pgTable(
  "sso_identities",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    subject: text("subject").notNull(),
    email: text("email").notNull(),
    lastSignInAt: bigint("last_sign_in_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.provider] })],
);

export const branchItems = pgTable(
  "branch_items",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    fork: text("fork").notNull(),
    branch: bigint("branch", { mode: "number" }).notNull(),
    responseId: text("response_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    type: text("type").notNull(),
    data: json("data").notNull().$type<ConversationItem | CompactionItem>(),
    input: boolean("input").notNull().default(false),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("branch_items_fork").on(t.threadId, t.fork, t.branch)],
);

export const forks = pgTable(
  "forks",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    fork: text("fork").notNull(),
    current: bigint("current", { mode: "number" }).notNull(),
    count: bigint("count", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.fork] })],
);
