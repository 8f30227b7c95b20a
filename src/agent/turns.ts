import { InvalidRequest, NotFound, TurnError, Unavailable, type TurnErrorCode } from "../errors";
import type { BatchItem } from "drizzle-orm/batch";
import type { ApprovalPolicy } from "../config/schema";
import type { Llm, LlmOptions } from "../llm/types";
import { logTurn, type Logger } from "../log";
import type { Safety } from "../safety/safety";
import type { ContextSettings } from "../context/budget";
import type { CompactionItem } from "../context/compaction";
import { Calibrations } from "../context/estimate";
import type { NoteStore } from "../context/flush";
import { ThreadCache } from "../context/thread-cache";
import { ThreadContext } from "../context/thread-context";
import { storeCompaction, type ThreadContextRows } from "../store/compactions";
import { commitTurn, findResponse, getGate, getThread, type Gate } from "../store/conversations";
import type { Db } from "../store/db";
import type { ToolRegistry } from "../tools/registry";
import type { ExternalTool } from "../tools/tool";
import { itemId, newUuid, responseId, threadOfResponse } from "./ids";
import type { ConversationItem, FunctionCallItem, FunctionCallOutputItem, ImageRef } from "./items";
import { agentLoop, type AgentEvent, type LoopOutcome } from "./loop";
import { systemPrompt, type IdentitySource } from "./prompt";
import { ThreadLocks } from "./thread-locks";

export interface AgentDeps {
  db: Db;
  llm: Llm;
  tools: ToolRegistry;
  identity: IdentitySource;
  maxSteps: number;
  safety: Safety;
  /** The approval policies in force for a user: tool name → policy. */
  policies: (userId: string) => Promise<(toolName: string) => ApprovalPolicy>;
  /** Remembers "always allow" for a user's tool. */
  allowAlways: (userId: string, toolName: string) => Promise<void>;
  /** Where a person resolves a gate of this thread (the web UI). */
  gateUrl: (threadId: string) => string;
  /** Whether a tool may run for this user, or which extension must be connected first (OAuth). */
  authorization?: (toolName: string, userId: string, threadId: string) => Promise<{ extension: string; url: string } | undefined>;
  /** Resolves once tools still being set up (MCP servers starting) are in place, or waited for long enough. */
  toolsReady?: (signal: AbortSignal) => Promise<void>;
  /** The context window and how long threads are compacted (`llm.*`). */
  context: ContextSettings;
  /** Where the silent step before a compaction writes its notes (workspace memory). */
  notes?: NoteStore;
  log?: Logger;
}

export type ApprovalDecision = "approve" | "deny" | "always";

/** An item a caller sends: a message (`type` may be left out), or a call and output it replays. */
export type InputItem =
  | { type?: "message"; role: "user" | "assistant"; content: string; images?: ImageRef[] }
  | Omit<FunctionCallItem, "id">
  | Omit<FunctionCallOutputItem, "id">;

export interface TurnRequest {
  userId: string;
  /** Where the turn came from: the log line says it, and a new thread is labelled with it. */
  channel: "responses" | "chat" | "webhook";
  /** Continue this thread; undefined starts a new one. */
  threadId?: string;
  /** This turn's input, in order: the history a stateless caller replays, then its new messages. */
  messages: InputItem[];
  /** Outputs answering the call the thread waits on (a resume of its external-tool gate). */
  toolOutputs: { call_id: string; output: string; images?: ImageRef[] }[];
  /** The response the caller continues: it must be theirs and still stored, or the turn fails with not_found. */
  previousResponseId?: string;
  /** false: the turn runs but nothing of it is stored (Responses `store: false`). */
  store?: boolean;
  /** Sampling and output format sent to the LLM with every step. */
  llmOptions?: LlmOptions;
  /** Caller tools for the thread; undefined keeps the catalog the thread already has. */
  externalTools?: ExternalTool[];
  /** What the response reports as its model. */
  model: string;
  /** Cancel the turn when it runs longer than this. */
  timeoutMs?: number;
  /** Facts of the request the channel wants back when the response is read again. */
  meta?: Record<string, unknown>;
  /** Writes of the channel committed in the same transaction as the turn. */
  commitAlso?: (result: TurnResult) => BatchItem<"sqlite">[];
  /** Resolves the approval gate the thread waits on, instead of adding messages. */
  approval?: ApprovalDecision;
  /** Resumes a thread waiting on an OAuth gate, once the extension has been connected. */
  authorized?: boolean;
  /**
   * Whether the channel shows gates to a person (web UI, TUI). When it does not (the
   * Responses API), a turn that reaches an approval gate fails with approval_required.
   */
  surfacesGates?: boolean;
}

export interface TurnResult {
  id: string;
  threadId: string;
  createdAt: number;
  model: string;
  status: "completed" | "failed";
  error: { code: TurnErrorCode; message: string } | null;
  /** The items of this turn: its input, then what it produced. */
  items: ConversationItem[];
  /** What the turn produced: `items` without the input. */
  output: ConversationItem[];
  usage: { inputTokens: number; outputTokens: number };
  /** The caller tools the thread offered during this turn. */
  tools: ExternalTool[];
}

/** What the assistant said in a turn: its messages' text, in order. */
export function answerText(r: Pick<TurnResult, "output">): string {
  return r.output.flatMap((i) => (i.type === "message" && i.role === "assistant" ? [i.content] : [])).join("\n\n");
}

interface Inflight {
  controller: AbortController;
  userId: string;
  finished: Promise<TurnResult>;
}

export interface Turn {
  /** True when the thread asked for is unknown or someone else's; running it reports not_found. */
  notFound?: boolean;
  id: string;
  threadId: string;
  createdAt: number;
  /** The turn's input items, as they are stored. */
  input: ConversationItem[];
  /** Runs the turn; yields the loop's events and returns the committed result. */
  run(): AsyncGenerator<AgentEvent, TurnResult>;
}

/** What a turn starts from: the thread's context, the turn's input items, the user's tool policies. */
interface Opened {
  context: ThreadContext;
  input: ConversationItem[];
  policy: (toolName: string) => ApprovalPolicy;
}

export class Agent {
  readonly #locks = new ThreadLocks();
  readonly #inflight = new Map<string, Inflight>();
  /** What the provider's token counts taught us, for every thread. */
  readonly #calibrations = new Calibrations();
  readonly #threads = new ThreadCache();

  constructor(readonly deps: AgentDeps) {}

  /**
   * Checks the request against the thread's state and returns a turn ready to run. Invalid
   * requests throw InvalidRequest and change nothing. The thread stays locked until the turn
   * has run, so a second request on it waits for the first.
   */
  async begin(req: TurnRequest): Promise<Turn> {
    const threadId = req.threadId ?? newUuid();
    const id = responseId(newUuid(), threadId);
    const createdAt = Math.floor(Date.now() / 1000);
    const base = { id, threadId, createdAt, model: req.model };
    if (!req.threadId) {
      // a new thread has no gate: a function_call_output on it answers nothing (400)
      checkResume(req, undefined, this.deps.gateUrl(threadId));
      // locked too: a follow-up naming this turn's id (streamed in response.created) waits for it
      const release = await this.#locks.acquire(threadId);
      try {
        const opened = await this.#open(req, threadId, undefined, undefined, undefined);
        return this.#turn(req, base, { isNew: true, gate: undefined, tools: undefined, ...opened }, release);
      } catch (e) {
        release();
        throw e;
      }
    }

    const release = await this.#locks.acquire(threadId);
    try {
      const thread = await getThread(this.deps.db, threadId);
      const previousGone = req.previousResponseId !== undefined && !(await findResponse(this.deps.db, req.previousResponseId, req.userId));
      if (!thread || thread.userId !== req.userId || previousGone) {
        release();
        return notFoundTurn(base);
      }
      const gate = await getGate(this.deps.db, threadId);
      checkResume(req, gate, this.deps.gateUrl(threadId));
      const rows = await this.#threads.load(this.deps.db, thread);
      const tools = thread.tools ? (JSON.parse(thread.tools) as ExternalTool[]) : undefined;
      const opened = await this.#open(req, threadId, rows, gate, tools);
      return this.#turn(req, base, { isNew: false, gate, tools, ...opened }, release);
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Runs `fn` holding the thread's lock, as a turn would: no turn of the thread runs meanwhile. */
  async withThread<T>(threadId: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.#locks.acquire(threadId);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * Summarises a thread's turns but the latest, as `/compact` asks: the compaction stored,
   * or undefined when there is nothing before the latest turn. Waits for a running turn.
   */
  async compact(userId: string, threadId: string, signal: AbortSignal): Promise<CompactionItem | undefined> {
    return this.withThread(threadId, async () => {
      const thread = await getThread(this.deps.db, threadId);
      if (!thread || thread.userId !== userId) throw new NotFound(`No thread found with id ${threadId}.`);
      const gate = await getGate(this.deps.db, threadId);
      const { context } = await this.#open({ userId, messages: [], toolOutputs: [] }, threadId, await this.#threads.load(this.deps.db, thread), gate, undefined);
      return (await context.compact(signal)).item;
    });
  }

  /**
   * A turn's starting point. The system prompt is built here, so that an input that could
   * never fit the context window is refused (400) before anything is stored.
   */
  async #open(
    req: Pick<TurnRequest, "userId" | "messages" | "toolOutputs" | "externalTools" | "store">,
    threadId: string,
    rows: ThreadContextRows | undefined,
    gate: Gate | undefined,
    threadTools: ExternalTool[] | undefined,
  ): Promise<Opened> {
    const { deps } = this;
    const policy = await deps.policies(req.userId);
    const context = new ThreadContext(
      {
        llm: deps.llm,
        settings: deps.context,
        calibrations: this.#calibrations,
        noteTool: deps.tools.specs().find((t) => t.name === "memory_write"),
        notes: deps.notes,
        redact: (text) => deps.safety.redact(text),
        // a turn that stores nothing (store: false) leaves its thread as it was
        store: req.store === false ? async () => {} : (id, item, seq) => storeCompaction(deps.db, id, item, seq),
        log: deps.log ?? (() => {}),
      },
      {
        threadId,
        userId: req.userId,
        system: systemPrompt(await deps.identity(req.userId)),
        compaction: rows?.compaction,
        history: rows?.history ?? [],
        nextSeq: rows?.nextSeq ?? 0,
        awaited: gate?.kind === "external_tool" ? gate.callId : undefined,
        policy,
      },
    );
    const input: ConversationItem[] = [
      ...req.toolOutputs.map((o) => ({ type: "function_call_output" as const, id: itemId(), ...o })),
      ...req.messages.map((m): ConversationItem => ("role" in m ? { ...m, type: "message", id: itemId() } : { ...m, id: itemId() })),
    ];
    context.checkInput(input, [...deps.tools.specs(), ...(req.externalTools ?? threadTools ?? [])]);
    return { context, input, policy };
  }

  /** Cancels the thread's running turns (it is being deleted) and waits until they have ended. */
  async cancelThread(threadId: string, userId: string): Promise<void> {
    const running = [...this.#inflight.entries()].filter(([id, t]) => t.userId === userId && threadOfResponse(id) === threadId);
    for (const [, t] of running) t.controller.abort(new TurnError("cancelled", "The conversation was deleted."));
    await Promise.allSettled(running.map(([, t]) => t.finished));
  }

  /** Cancels every running turn of the user (the user is being deleted) and waits until they have ended. */
  async cancelUser(userId: string): Promise<void> {
    const running = [...this.#inflight.values()].filter((t) => t.userId === userId);
    for (const t of running) t.controller.abort(new TurnError("cancelled", "The user was deleted."));
    await Promise.allSettled(running.map((t) => t.finished));
  }

  /** Cancels a running turn of this user's; resolves to its stored result, or undefined if none runs. */
  cancel(responseId: string, userId: string): Promise<TurnResult> | undefined {
    const turn = this.#inflight.get(responseId);
    if (!turn || turn.userId !== userId) return undefined;
    turn.controller.abort(new TurnError("cancelled", "The response was cancelled."));
    return turn.finished;
  }

  /** Cuts every running turn short and waits until each has stored its result (shutdown). */
  async cancelAll(reason: string): Promise<void> {
    const running = [...this.#inflight.values()];
    for (const t of running) t.controller.abort(new TurnError("shutdown", reason));
    await Promise.allSettled(running.map((t) => t.finished));
  }

  /** Resolves when the turns running now have all finished. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#inflight.values()].map((t) => t.finished));
  }

  #turn(
    req: TurnRequest,
    base: { id: string; threadId: string; createdAt: number; model: string },
    state: Opened & { isNew: boolean; gate: Gate | undefined; tools: ExternalTool[] | undefined },
    release: () => void,
  ): Turn {
    const { deps } = this;
    const inflight = this.#inflight;
    const { input } = state;
    return {
      ...base,
      input,
      async *run() {
        const controller = new AbortController();
        const startedAt = Date.now();
        let settle!: (r: TurnResult) => void;
        let fail!: (e: unknown) => void;
        const finished = new Promise<TurnResult>((res, rej) => ((settle = res), (fail = rej)));
        finished.catch(() => {});
        inflight.set(base.id, { controller, userId: req.userId, finished });
        const timer = req.timeoutMs
          ? setTimeout(
              () => controller.abort(new TurnError("turn_timeout", `The turn took longer than ${req.timeoutMs! / 1000} s. Use stream: true for long work.`)),
              req.timeoutMs,
            )
          : undefined;
        const produced = [...input];
        const inputCount = input.length;
        const usage = { inputTokens: 0, outputTokens: 0 };
        const external = req.externalTools ?? state.tools ?? [];
        let error: TurnResult["error"] = null;
        let gate: Gate | null = null;
        try {
          await deps.toolsReady?.(controller.signal);
          const loop = agentLoop({
            llm: deps.llm,
            tools: deps.tools,
            external,
            context: state.context,
            pending: state.gate?.pending ?? [],
            maxSteps: deps.maxSteps,
            ctx: { userId: req.userId, threadId: base.threadId, signal: controller.signal },
            llmOptions: req.llmOptions,
            deadline: req.timeoutMs ? startedAt + req.timeoutMs : undefined,
            produced,
            safety: deps.safety,
            policy: state.policy,
            decision: req.approval && state.gate ? { callId: state.gate.callId, approve: req.approval !== "deny" } : undefined,
            authorize: deps.authorization && ((tool) => deps.authorization!(tool, req.userId, base.threadId)),
          });
          if (req.approval === "always" && state.gate?.details?.tool) {
            await deps.allowAlways(req.userId, String(state.gate.details.tool));
          }
          for (;;) {
            const next = await loop.next();
            if (next.done) {
              ({ gate, error } = gateOf(next.value, base, req.surfacesGates ?? false, deps.gateUrl(base.threadId)));
              break;
            }
            if (next.value.type === "usage") {
              usage.inputTokens += next.value.inputTokens;
              usage.outputTokens += next.value.outputTokens;
            }
            yield next.value;
          }
        } catch (e) {
          const reason = controller.signal.aborted ? controller.signal.reason : e;
          error =
            reason instanceof TurnError
              ? { code: reason.code, message: reason.message }
              : { code: "llm_error", message: `The turn failed: ${(reason as Error)?.message ?? String(reason)}` };
          // a provider's error text may quote a key: it reaches the caller redacted
          error.message = deps.safety.redact(error.message);
        } finally {
          clearTimeout(timer);
        }
        const output = produced.slice(inputCount);
        const result: TurnResult = { ...base, status: error ? "failed" : "completed", error, items: produced, output, usage, tools: external };
        try {
          if (req.store !== false) await commitTurn(deps.db, {
            thread: { id: base.threadId, userId: req.userId, isNew: state.isNew, tools: external.length ? external : null, title: titleOf(req), channel: req.channel },
            response: {
              id: base.id,
              status: result.status,
              model: base.model,
              error: error ? JSON.stringify(error) : null,
              inputTokens: usage.inputTokens,
              outputTokens: usage.outputTokens,
              costMicroUsd: 0,
              meta: req.meta ? JSON.stringify(req.meta) : null,
              createdAt: base.createdAt,
            },
            items: produced.map((item, i) => ({ seq: state.context.nextSeq + i, item, input: i < inputCount })),
            gate,
            also: req.commitAlso?.(result),
          });
        } catch (e) {
          const failure = new Unavailable(`The database could not store the turn: ${(e as Error).message}`);
          fail(failure);
          throw failure;
        } finally {
          inflight.delete(base.id);
          release();
        }
        logTurn(deps.log, result, req, startedAt);
        settle(result);
        return result;
      },
    };
  }
}

/**
 * The gate a paused turn leaves on its thread, and, for channels that cannot show gates to a
 * person (the Responses API), the error that tells the caller where to resolve it.
 */
function gateOf(
  out: LoopOutcome,
  base: { id: string; threadId: string },
  surfacesGates: boolean,
  gateUrl: string,
): { gate: Gate | null; error: TurnResult["error"] } {
  const at = { responseId: base.id };
  switch (out.kind) {
    case "done":
      return { gate: null, error: null };
    case "paused":
      return { gate: { ...at, kind: "external_tool", callId: out.call.call_id, pending: out.pending }, error: null };
    case "approval": {
      const details = { tool: out.call.name, arguments: out.call.arguments };
      const gate: Gate = { ...at, kind: "approval", callId: out.call.call_id, pending: out.pending, details };
      const message = `The tool ${out.call.name} needs approval. Approve or deny it in the web UI at ${gateUrl} or in the terminal UI; the turn goes on from there.`;
      return { gate, error: surfacesGates ? null : { code: "approval_required", message } };
    }
    case "oauth": {
      const details = { tool: out.call.name, arguments: out.call.arguments, extension: out.extension, connect_url: out.url };
      const gate: Gate = { ...at, kind: "oauth", callId: out.call.call_id, pending: out.pending, details };
      const message = `The tool ${out.call.name} needs the extension ${out.extension} to be connected to your account. Connect it in the web UI at ${out.url}; the turn goes on from there.`;
      return { gate, error: surfacesGates ? null : { code: "auth_required", message } };
    }
  }
}

function checkResume(req: TurnRequest, gate: Gate | undefined, gateUrl: string): void {
  if (req.authorized) {
    if (gate?.kind !== "oauth") throw new InvalidRequest("No tool call is waiting for an extension to be connected on this thread.");
    if (req.toolOutputs.length || req.messages.length) throw new InvalidRequest("Resume the connected extension's call on its own, then send new messages.");
    return;
  }
  if (req.approval) {
    if (gate?.kind !== "approval") throw new InvalidRequest("No tool call is waiting for approval on this thread.");
    if (req.toolOutputs.length || req.messages.length) {
      throw new InvalidRequest("Resolve the approval on its own, then send new messages.");
    }
    return;
  }
  if (req.toolOutputs.length === 0) {
    if (gate?.kind === "external_tool") {
      throw new InvalidRequest(
        `This thread is waiting for the output of call ${gate.callId}; send a function_call_output item with that call_id first.`,
      );
    }
    if (gate) throw new InvalidRequest(gateElsewhere(gate, gateUrl));
    return;
  }
  if (!gate) throw new InvalidRequest("No tool call is waiting for output on this thread.");
  if (gate.kind !== "external_tool") throw new InvalidRequest(gateElsewhere(gate, gateUrl));
  if (req.toolOutputs.length > 1) {
    throw new InvalidRequest(`Only one function_call_output is expected: the thread waits for call ${gate.callId}.`);
  }
  const got = req.toolOutputs[0]!.call_id;
  if (got !== gate.callId) {
    throw new InvalidRequest(`call_id ${JSON.stringify(got)} does not match the pending call ${gate.callId}.`);
  }
}

function gateElsewhere(gate: Gate, url: string): string {
  const what =
    gate.kind === "approval"
      ? `approval of ${String(gate.details?.tool ?? "a tool call")}`
      : gate.kind === "oauth"
        ? `connection of the extension ${String(gate.details?.extension ?? "")} (OAuth)`
        : `${gate.kind} gate`;
  const where = gate.kind === "oauth" && gate.details?.connect_url ? String(gate.details.connect_url) : url;
  return `This thread waits on a pending ${what}; resolve it in the web UI at ${where} or another channel first.`;
}

/** A thread's title: its first words, without the instruction and context blocks before them. */
function titleOf(req: TurnRequest): string | undefined {
  const last = req.messages.findLast((m) => "role" in m && m.role === "user");
  const text = (last && "role" in last ? last.content : undefined)
    ?.replace(/<(instructions|user-context)>[\s\S]*?<\/\1>/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return text ? text.slice(0, 80) : undefined;
}

/** A previous response that is unknown or someone else's: a failed turn that reveals nothing. */
function notFoundTurn(base: { id: string; threadId: string; createdAt: number; model: string }): Turn {
  return {
    ...base,
    input: [],
    notFound: true,
    // eslint-disable-next-line require-yield
    async *run() {
      return {
        ...base,
        status: "failed",
        error: { code: "not_found", message: "The previous_response_id or conversation does not name one of yours." },
        items: [],
        output: [],
        tools: [],
        usage: { inputTokens: 0, outputTokens: 0 },
      };
    },
  };
}
