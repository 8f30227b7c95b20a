import type { Agent } from "./agent/turns";
import type { Authenticator } from "./auth/principal";
import type { UserAdmin } from "./auth/users";
import type { SsoService } from "./auth/sso/service";
import type { Config } from "./config/schema";
import type { Llm } from "./llm/types";
import type { StreamSlots } from "./llm/stream-slots";
import type { Logger } from "./log";
import type { MemoryService } from "./memory/service";
import type { Broadcast } from "./store/broadcast";
import type { Db, Limiter } from "./store/db";
import type { ToolRegistry } from "./tools/registry";
import type { McpManager } from "./mcp/manager";
import type { ExtensionManager } from "./extensions/manager";
import type { ContextWindow } from "./llm/window";
import type { BuildInfo } from "./version";
import type { Routines } from "./routines/service";
import type { Budgets } from "./usage/budgets";
import type { Metrics } from "./observability/metrics";
import type { LoopPauses } from "./observability/loop-pauses";

/** What the HTTP features are given; they never reach further than this. */
export interface Services {
  config: Config;
  /** The service home (`SERVICE_HOME`): the keys kept there. */
  home: string;
  db: Db;
  llm: Llm;
  /** How many LLM streams run and wait (GET /api/status). */
  llmStreams: StreamSlots;
  /** The longest recent hold-ups of the event loop (GET /api/status). */
  loopPauses: { max(): LoopPauses };
  /** Workspace memory: documents, search and the identity files. */
  memory: MemoryService;
  tools: ToolRegistry;
  agent: Agent;
  auth: Authenticator;
  /** Users: listing, roles, suspension, tokens, deletion (the admin API). */
  users: UserAdmin;
  /** Signing in through an identity provider (`auth.sso`). */
  sso: SsoService;
  /** Shared by Responses POST and /api/chat/send (and by every replica on the database). */
  turnLimiter: Limiter;
  /** The other processes on the database (replicas), for what they must hear: chat events. */
  broadcast: Broadcast;
  version: string;
  /** Which build runs: version, commit, build date (GET /api/status). */
  build: BuildInfo;
  /** The model's context window and where it came from (GET /api/status). */
  contextWindow: ContextWindow;
  startedAt: number;
  channels: { gateway: boolean; webhook: boolean; tui: boolean };
  /** Non-streaming Responses and POST /api/chat turn timeout: RESPONSES_TURN_TIMEOUT_S, else 120 s under revision A, 30 s under B. */
  turnTimeoutMs: number;
  /** Timeout of turns that run without a waiting request (/api/chat/send, background responses): TURN_TIMEOUT_S. */
  backgroundTurnTimeoutMs: number;
  log: Logger;
  /** The configured MCP servers (their state is part of GET /api/status). */
  mcp?: McpManager;
  /** Installed extensions: their tools, credentials and OAuth flows (GET /api/extensions). */
  extensions?: ExtensionManager;
  /** The users' routines: scheduled agent runs (`/api/routines`). */
  routines: Routines;
  /** Spending limits and what was spent against them (GET /api/usage). */
  budgets?: Budgets;
  /** GET /metrics, when METRICS_ENABLED: the metrics and the bearer tokens that may read them. */
  metrics?: { metrics: Metrics; tokens: string[] };
}
