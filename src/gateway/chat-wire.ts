// The shapes of the local chat endpoints (src/gateway/chat.ts, events.ts, approvals.ts), in
// one place for the server and its two clients: the web UI (src/web) and the TUI.
// The clients import the types only (`import type`), so TypeBox stays out of the browser bundle.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { UUID_PATTERN } from "../conversation/uuid";
import { ApprovalDecision } from "../conversation/items";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A thread named by a request (path, query or body): malformed is a 400 before anything runs. */
export const ThreadId = Type.String({ pattern: UUID_PATTERN, error: "must be a thread UUID." });
/** The path parameters of `/api/chat/threads/{thread_id}…` and `/api/chat/approvals/{thread_id}`. */
export const ThreadParams = Type.Object({ thread_id: ThreadId });
const Ids = { thread_id: Type.String(), response_id: Type.String() };

/** What an approval prompt shows besides the tool and its arguments. */
const ApprovalFacts = {
  /**
   * The call could carry data out of the box and the turn has read untrusted content (a web
   * page, an MCP result…): where the data would go (a host, an MCP server, an extension).
   */
  destination: Type.Optional(Type.String()),
  /** The call changes an identity file: the change as a unified diff. */
  diff: Type.Optional(Type.String()),
};

/** A compaction as the chat UIs show it (history, POST /api/chat/threads/{id}/compact, events). */
export const CompactionMark = Type.Object({
  type: Type.Literal("compaction"),
  id: Type.String(),
  summary: Type.String(),
  /** How many items of the thread the summary stands for. */
  summarised_items: Type.Number(),
  trigger: Type.Union([Type.Literal("auto"), Type.Literal("overflow"), Type.Literal("manual")]),
  /** Notes the agent saved to memory just before. */
  memory_notes: Type.Number(),
  created_at: Type.Number(),
});
export type CompactionMark = Static<typeof CompactionMark>;

/** What the web UI and the TUI receive on GET /api/chat/events, one SSE event each. */
export const ChatEvent = Type.Union([
  Type.Object({
    type: Type.Literal("turn.started"),
    ...Ids,
    /** What started the turn: `chat` (web UI, TUI), `responses` (the API) or `webhook` (a job, a routine's run). */
    channel: Type.Optional(Type.String()),
    /** The webhook job, or the routine, the turn runs for. */
    job_id: Type.Optional(Type.String()),
    routine_id: Type.Optional(Type.String()),
  }),
  /** With this turn the user's spending passed 80 % of a budget. */
  Type.Object({ type: Type.Literal("budget.warning"), ...Ids, message: Type.String() }),
  Type.Object({ type: Type.Literal("message.started"), ...Ids, item_id: Type.String() }),
  Type.Object({ type: Type.Literal("message.delta"), ...Ids, item_id: Type.String(), delta: Type.String() }),
  Type.Object({
    type: Type.Literal("message.completed"),
    ...Ids,
    item_id: Type.String(),
    text: Type.String(),
    /** The answer was cut (at the model's token limit, or the turn was cut short). */
    status: Type.Optional(Type.Literal("incomplete")),
  }),
  /** A piece of the model's reasoning in one step (`item_id` is the step's): shown collapsed, never stored. */
  Type.Object({ type: Type.Literal("reasoning.delta"), ...Ids, item_id: Type.String(), delta: Type.String() }),
  Type.Object({ type: Type.Literal("tool.started"), ...Ids, call_id: Type.String(), name: Type.String(), arguments: Type.String() }),
  Type.Object({ type: Type.Literal("tool.completed"), ...Ids, call_id: Type.String(), output: Type.String(), is_error: Type.Boolean() }),
  Type.Object({
    type: Type.Literal("approval.required"),
    ...Ids,
    call_id: Type.String(),
    tool: Type.String(),
    arguments: Type.String(),
    ...ApprovalFacts,
  }),
  /** The approval of `call_id` was decided (in this client or another): the turn it resumes follows. */
  Type.Object({ type: Type.Literal("approval.decided"), ...Ids, call_id: Type.String(), decision: ApprovalDecision }),
  /** An identity file (AGENTS.md, SOUL.md, USER.md, IDENTITY.md) was changed in this turn, with the user's approval. */
  Type.Object({ type: Type.Literal("identity.changed"), ...Ids, path: Type.String() }),
  /** The tool's extension must be connected (OAuth) at `connect_url`; the turn goes on once it is. */
  Type.Object({
    type: Type.Literal("auth.required"),
    ...Ids,
    call_id: Type.String(),
    tool: Type.String(),
    extension: Type.String(),
    connect_url: Type.String(),
  }),
  /** Older turns of the thread were summarised to make room for this one. */
  Type.Object({ type: Type.Literal("thread.compacted"), ...Ids, compaction: CompactionMark }),
  Type.Object({
    type: Type.Literal("turn.completed"),
    ...Ids,
    status: Type.Union([Type.Literal("completed"), Type.Literal("failed")]),
    /** `code` is a turn error code (`cancelled`, `llm_error`, ...), or null when the service itself failed. */
    error: Nullable(Type.Object({ code: Nullable(Type.String()), message: Type.String() })),
    waiting: Nullable(Type.Union([Type.Literal("approval"), Type.Literal("oauth")])),
  }),
]);
export type ChatEvent = Static<typeof ChatEvent>;

/** GET /api/chat/threads, one entry of `threads`. */
export const ThreadSummary = Type.Object({
  id: Type.String(),
  title: Nullable(Type.String()),
  /** The channel that started the thread: responses (the API), chat (web UI, TUI) or webhook; null for older threads. */
  channel: Nullable(Type.String()),
  /** ISO 8601, UTC. */
  created_at: Type.String(),
  updated_at: Type.String(),
  /** The gate the thread waits on, if any. */
  waiting: Nullable(Type.Union([Type.Literal("external_tool"), Type.Literal("approval"), Type.Literal("oauth")])),
});
export type ThreadSummary = Static<typeof ThreadSummary>;

/** Which of a fork's alternatives is shown (regenerated answers, edited messages): the 1/2 arrows. */
export const BranchState = Type.Object({ current: Type.Integer({ minimum: 1 }), count: Type.Integer({ minimum: 2 }) });
export type BranchState = Static<typeof BranchState>;

/** An entry of GET /api/chat/history: a message, a tool call with its result, a decided approval. */
export const HistoryItem = Type.Union([
  Type.Object({
    type: Type.Literal("message"),
    id: Type.String(),
    role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
    content: Type.String(),
    /** An answer cut short (stopped, timed out, the service stopped, the model failed). */
    status: Type.Optional(Type.Literal("incomplete")),
    /** A user message where the conversation forks: which alternative this is (POST …/branches switches). */
    branch: Type.Optional(BranchState),
  }),
  Type.Object({
    type: Type.Literal("tool_call"),
    id: Type.String(),
    call_id: Type.String(),
    name: Type.String(),
    arguments: Type.String(),
    output: Nullable(Type.String()),
    /** The call failed or was refused (its output says why), as `tool.completed`'s `is_error`. */
    is_error: Type.Boolean(),
    external: Type.Boolean(),
  }),
  /** An approval prompt and what the person decided; the call it decided follows it. */
  Type.Object({
    type: Type.Literal("approval"),
    id: Type.String(),
    call_id: Type.String(),
    tool: Type.String(),
    arguments: Type.String(),
    ...ApprovalFacts,
    decision: ApprovalDecision,
    /** ISO 8601, UTC. */
    decided_at: Type.String(),
  }),
  /** A turn that failed or was stopped, after what it left (`turn.completed`'s error, as it was shown live). */
  Type.Object({
    type: Type.Literal("turn_error"),
    id: Type.String(),
    response_id: Type.String(),
    code: Nullable(Type.String()),
    message: Type.String(),
  }),
  /** Where the model's view of the thread begins to be a summary: the items before it were summarised. */
  CompactionMark,
]);
export type HistoryItem = Static<typeof HistoryItem>;

/** POST /api/chat/threads/{thread_id}/compact */
export const Compacted = Type.Object({ thread_id: Type.String(), compacted: Type.Boolean(), compaction: Nullable(CompactionMark) });
export type Compacted = Static<typeof Compacted>;

/** What a thread waits on, in GET /api/chat/history. */
export const Waiting = Type.Object({
  kind: Type.String(),
  call_id: Type.String(),
  tool: Nullable(Type.String()),
  arguments: Nullable(Type.String()),
  ...ApprovalFacts,
  /** OAuth gates: the extension to connect and the page that connects it. */
  extension: Type.Optional(Nullable(Type.String())),
  connect_url: Type.Optional(Nullable(Type.String())),
});
export type Waiting = Static<typeof Waiting>;

/** GET /api/chat/history */
export const History = Type.Object({
  thread_id: Type.String(),
  title: Nullable(Type.String()),
  items: Type.Array(HistoryItem),
  waiting: Nullable(Waiting),
});
export type History = Static<typeof History>;

/** GET /api/chat/approvals, one entry of `approvals`: a tool call waiting for this user's decision. */
export const PendingApproval = Type.Object({
  thread_id: Type.String(),
  /** The title of the thread it waits in. */
  thread_title: Nullable(Type.String()),
  call_id: Type.String(),
  tool: Type.String(),
  arguments: Type.String(),
  ...ApprovalFacts,
  created_at: Type.String(),
});
export type PendingApproval = Static<typeof PendingApproval>;

/** POST /api/chat/threads/{thread_id}/branches: show another alternative at the fork `item_id` starts. */
export const SwitchBranch = Type.Object({ item_id: Type.String({ minLength: 1, error: "is required: the id of the message where the conversation forks." }), branch: Type.Integer({ minimum: 1 }) });
export type SwitchBranch = Static<typeof SwitchBranch>;

/** POST /api/chat/send (202) */
export const Accepted = Type.Object({ message_id: Type.String(), ...Ids, status: Type.Literal("accepted") });
export type Accepted = Static<typeof Accepted>;

/** POST /api/chat/approvals/{thread_id}: the body's `decision`. */
export const Decision = ApprovalDecision;
export type Decision = ApprovalDecision;

/** GET /api/chat/threads */
export const ThreadList = Type.Object({ threads: Type.Array(ThreadSummary) });
/** GET /api/chat/approvals */
export const ApprovalList = Type.Object({ approvals: Type.Array(PendingApproval) });
export type ApprovalList = Static<typeof ApprovalList>;

const TurnStatus = Type.String();
const TurnFailure = Nullable(Type.Object({ code: Nullable(Type.String()), message: Type.String() }));

/** POST /api/chat: the answer, once the turn has ended. */
export const ChatReply = Type.Object({ ...Ids, response: Type.String(), status: TurnStatus, error: TurnFailure });
export type ChatReply = Static<typeof ChatReply>;

/** POST /api/chat/approvals/{thread_id}: the turn the decision resumed, once it stops again. */
export const DecisionReply = Type.Object({
  ...Ids,
  status: TurnStatus,
  output_text: Type.String(),
  error: TurnFailure,
  /** The continued turn stopped at the next call that needs approval. */
  pending_approval: Nullable(Type.Object({ call_id: Type.String(), tool: Type.String(), arguments: Type.String() })),
});
export type DecisionReply = Static<typeof DecisionReply>;
