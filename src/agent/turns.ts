import { ThreadNotFound, TurnError } from "../errors";
import type { ApprovalPolicy } from "../config/schema";
import type { Llm, ToolSpec } from "../llm/types";
import { logTurn, noLog, type Logger } from "../log";
import type { Safety } from "../safety/safety";
import type { ContextSettings } from "../context/budget";
import type { CompactionItem } from "../conversation/items";
import { Calibrations } from "../context/estimate";
import type { NoteStore } from "../context/flush";
import { ThreadCache } from "../context/thread-cache";
import { ThreadContext } from "../context/thread-context";
import { KeyedLock } from "../keyed-lock";
import type { Locks } from "../store/db";
import { storeCompaction, type ThreadContextRows } from "../store/compactions";
import { deleteThread, findResponse, getGate, ownThread, type Gate } from "../store/conversations";
import type { Db } from "../store/db";
import type { ToolRegistry } from "../tools/registry";
import type { ExternalTool } from "../conversation/items";
import { gateOf } from "./gates";
import { newUuid, responseId, threadOfResponse } from "../conversation/ids";
import { isUntrusted, type ConversationItem } from "../conversation/items";
import { agentLoop } from "./loop";
import { finishedTurn, recoveringTurn, type Recovering } from "./recover";
import { TurnBus, type TurnInfo } from "./bus";
import { TurnMeter } from "../usage/meter";
import type { Prices } from "../usage/prices";
import type { Budgets } from "../usage/budgets";
import type { UsageLedger } from "../usage/ledger";
import { egressKey } from "./policy";
import { TurnTrust, type DestinationRule } from "./trust";
import type { EgressEntry } from "../store/egress";
import { ToolOffer } from "./offer";
import { systemPrompt } from "./prompt";
import { identityTold, type IdentitySource } from "../memory/identity";
import { checkResume } from "./resume";
import { RunningTurns } from "./running";
import { acknowledgedEarly, durable, STOPPED, TurnRecords, type Ran, type StoredProgress } from "./turn-records";
import { inputItems, storedItem, type InputItem, type ToolOutputInput, type TurnHandle, type TurnRequest, type TurnResult } from "./turn-types";

export interface AgentDeps {
  db: Db;
  llm: Llm;
  tools: ToolRegistry;
  identity: IdentitySource;
  maxSteps: number;
  safety: Safety;
  /** The approval policies in force for a user: tool name → policy. */
  policies: (userId: string) => Promise<(toolName: string) => ApprovalPolicy>;
  /** Remembers "always allow" for a user's tool, or (`egress:<destination>`) for a destination. */
  allowAlways: (userId: string, toolName: string) => Promise<void>;
  /** Where a user's calls may send data without asking, in a turn that read untrusted content. */
  destinations?: (userId: string) => Promise<DestinationRule>;
  /** Keeps a call that could carry data out of the box and ran (the egress log). */
  recordEgress?: (entry: EgressEntry) => Promise<void>;
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
  /**
   * What turns cost: each turn's tokens and cost stored by model (`turn_usage`), priced with
   * `prices`; turns that would start over a budget fail. Without it turns are counted, not kept.
   */
  usage?: { prices: Prices; ledger: UsageLedger; budgets?: Budgets };
  /** The threads' locks: of this process (the default), or shared by every process on the database. */
  locks?: Locks;
  log?: Logger;
}

/** What `measure` and `summarise` look at: a request's thread (if any) and input. */
export type ViewRequest = Pick<TurnRequest, "userId" | "threadId" | "previousResponseId" | "externalTools"> & { messages: InputItem[]; toolOutputs: ToolOutputInput[] };

/** Where a turn starts from: the thread as it is, the turn's input, the user's tool policies. */
interface Prepared extends StoredProgress {
  gate: Gate | undefined;
  context: ThreadContext;
  input: ConversationItem[];
  policy: (toolName: string) => ApprovalPolicy;
  /** Counts what the turn's LLM requests cost, summaries included. */
  meter: TurnMeter;
  /** A stopped turn going on (`recover`): what it had produced, stored, and where it goes on from. */
  recovering?: Recovering;
}

/**
 * Runs turns. A thread runs one turn at a time: a second request waits for the first, in
 * arrival order. The lock is taken and released inside `start`/`run`, whatever happens.
 * Every turn's events go to `bus`, whatever channel started it.
 */
export class Agent {
  readonly bus = new TurnBus();
  readonly #locks: Locks;
  readonly #running = new RunningTurns();
  /** What the provider's token counts taught us, for every thread. */
  readonly #calibrations = new Calibrations();
  /** One function for every turn: the context keeps what it redacted per redactor. */
  readonly #redact = (text: string) => this.deps.safety.redact(text);
  readonly #threads = new ThreadCache();
  readonly #records: TurnRecords;
  /** What the context of a turn logs (a memory flush that failed). */
  readonly #contextLog: Logger;

  constructor(readonly deps: AgentDeps) {
    this.#contextLog = deps.log?.child({ component: "context" }) ?? noLog;
    this.#locks = deps.locks ?? new KeyedLock();
    this.#records = new TurnRecords(deps.db);
    this.bus.onListenerError((e) => deps.log?.error("turn event listener failed", { error: (e as Error)?.message ?? String(e) }));
  }

  /**
   * Starts a turn. Resolves once the request has been checked against its thread, with the
   * turn and its result to come; the bus has had its `turn.started` by then, before any
   * other event of it. An invalid request rejects (InvalidRequest, 400) and changes nothing;
   * an unknown or foreign thread rejects with ThreadNotFound.
   */
  start(req: TurnRequest): Promise<{ turn: TurnHandle; result: Promise<TurnResult> }> {
    const recover = req.input.kind === "recover" ? req.input.responseId : undefined;
    const threadId = (recover && threadOfResponse(recover)) || req.threadId || newUuid();
    const requestedAt = Date.now();
    const accepted = Promise.withResolvers<{ turn: TurnHandle; result: Promise<TurnResult> }>();
    let isAccepted = false;
    const result: Promise<TurnResult> = this.#locks.hold(threadId, async () => {
      if (recover) {
        const stored = await finishedTurn(this.deps.db, req.userId, recover, threadId);
        // it had finished after all (the process stopped before its channel heard): as it was stored
        if (stored) {
          isAccepted = true;
          accepted.resolve({ turn: stored.turn, result });
          return stored.result;
        }
      }
      const recovering = recover ? await recoveringTurn(this.deps.db, this.deps.tools, recover, threadId) : undefined;
      const prepared = await this.#prepare(recover ? { ...req, threadId } : req, threadId, req.timeoutMs ? requestedAt + req.timeoutMs : undefined);
      const turn = recovering
        ? { id: recover!, threadId, createdAt: Math.floor(requestedAt / 1000), input: [] }
        : { id: responseId(newUuid(), threadId), threadId, createdAt: Math.floor(requestedAt / 1000), input: prepared.input };
      if (recovering) prepared.recovering = recovering;
      else if (acknowledgedEarly(req)) await this.#records.acknowledge(req, turn, prepared);
      const info: TurnInfo = {
        id: turn.id,
        threadId,
        userId: req.userId,
        channel: req.channel,
        ...(req.origin ? { origin: req.origin } : {}),
        surfacesGates: req.surfacesGates ?? false,
        startedAt: Date.now(),
      };
      this.bus.publish(info, { type: "turn.started", turn, request: req });
      isAccepted = true;
      accepted.resolve({ turn, result });
      return this.#execute(req, turn, prepared, info, requestedAt);
    });
    // refused before it began: the caller hears it from `start`
    result.catch((e) => isAccepted || accepted.reject(e));
    this.#running.track(req.userId, result);
    return accepted.promise;
  }

  /** Runs a turn to its end: `start`, then its result. */
  async run(req: TurnRequest): Promise<TurnResult> {
    return (await this.start(req)).result;
  }

  /** Runs `fn` holding the thread's lock, as a turn would: no turn of the thread runs meanwhile. */
  withThread<T>(threadId: string, fn: () => Promise<T>): Promise<T> {
    return this.#locks.hold(threadId, fn);
  }

  /**
   * Summarises a thread's turns but the latest, as `/compact` asks: the compaction stored,
   * or undefined when there is nothing before the latest turn. Waits for a running turn.
   */
  async compact(userId: string, threadId: string, signal: AbortSignal): Promise<CompactionItem | undefined> {
    return this.withThread(threadId, async () => {
      const { rows, gate } = await this.#found(userId, threadId);
      const { context } = await this.#context({ userId, messages: [], toolOutputs: [] }, threadId, rows, gate, undefined);
      return (await context.compact(signal)).item;
    });
  }

  /**
   * The first model step of this request as it would be sent, in tokens, with nothing run or
   * stored (`responses.inputTokens.count`): the system prompt, the thread's summary and the
   * items after it, the input, and the tools offered. Unknown or foreign threads: ThreadNotFound.
   */
  async measure(req: ViewRequest): Promise<number> {
    const { context, input, offered } = await this.#view(req);
    return context.measure(input, offered);
  }

  /**
   * One summary of what the model sees of a thread (its summary and the items after it) and of
   * this input, stored nowhere and with no memory step (`responses.compact`).
   */
  async summarise(req: ViewRequest, signal: AbortSignal) {
    const { context, input } = await this.#view(req);
    return context.summariseAll(input, signal);
  }

  /** A request's thread and input as a turn would find them, read only: no lock, no gate checked. */
  async #view(req: ViewRequest) {
    if (!req.threadId) return this.#context(req, newUuid(), undefined, undefined, undefined, undefined, false);
    const { rows, gate, tools } = await this.#found(req.userId, req.threadId, req.previousResponseId);
    return this.#context(req, req.threadId, rows, gate, tools, undefined, false);
  }

  /**
   * The user's thread as a turn finds it: its stored context, its gate and the caller's tools
   * it keeps. ThreadNotFound when it is not theirs, or when the previous response named is gone;
   * `admit` may refuse the request at the gate before the stored context is read.
   */
  async #found(userId: string, threadId: string, previousResponseId?: string, admit?: (gate: Gate | undefined) => void) {
    const { db } = this.deps;
    const thread = await ownThread(db, userId, threadId);
    const previousGone = previousResponseId !== undefined && !(await findResponse(db, previousResponseId, userId));
    if (!thread || previousGone) throw new ThreadNotFound(threadId);
    const gate = await getGate(db, threadId);
    admit?.(gate);
    return { rows: await this.#threads.load(db, thread), gate, tools: thread.tools ?? undefined };
  }

  /**
   * Deletes a user's thread and all it holds, whichever API names it (a conversation, a chat
   * thread), under its lock. Its turns, the running one and those waiting for the thread,
   * end first, failed with `not_found`: none answers `completed` for what is then gone.
   * False when the thread is not the user's.
   */
  async deleteThread(userId: string, threadId: string): Promise<boolean> {
    if (!(await ownThread(this.deps.db, userId, threadId))) return false;
    await this.#running.stopWhile((t) => t.threadId === threadId, "not_found", "The conversation was deleted.", () =>
      this.withThread(threadId, () => deleteThread(this.deps.db, threadId)),
    );
    return true;
  }

  /** Cancels a running turn of this user's; resolves to its stored result, or undefined if none runs. */
  cancel(responseId: string, userId: string): Promise<TurnResult | undefined> | undefined {
    return this.#running.cancel(responseId, userId);
  }

  /** Cancels the turns the user has running now (the user was suspended) and waits until they have ended. */
  stopUser(userId: string): Promise<void> {
    return this.#running.stop((t) => t.userId === userId, "cancelled", "The user was suspended.");
  }

  /** Cancels every turn of the user, waiting ones and later ones too (the user is being deleted), and waits until they have ended. */
  cancelUser(userId: string): Promise<void> {
    return this.#running.stop((t) => t.userId === userId, "cancelled", "The user was deleted.", true);
  }

  /** Cuts every turn short, waiting ones and later ones too, and waits until each has stored its result (shutdown). */
  cancelAll(): Promise<void> {
    return this.#running.stop(() => true, STOPPED.code, STOPPED.message, true);
  }

  /** Resolves when the turns started by now, waiting ones included, have all finished. */
  idle(): Promise<void> {
    return this.#running.idle();
  }

  /** The thread as the request finds it, checked: its gate lets the request through. */
  async #prepare(req: TurnRequest, threadId: string, deadline: number | undefined): Promise<Prepared> {
    const view = { ...req, ...inputItems(req.input) };
    if (!req.threadId) {
      // a new thread has no gate: a function_call_output on it answers nothing (400)
      checkResume(req.input, undefined, this.deps.gateUrl(threadId));
      return { isNew: true, gate: undefined, tools: undefined, ...(await this.#context(view, threadId, undefined, undefined, undefined, deadline)) };
    }
    const admit = (gate: Gate | undefined) => checkResume(req.input, gate, this.deps.gateUrl(threadId));
    const { rows, gate, tools } = await this.#found(req.userId, threadId, req.previousResponseId, admit);
    return { isNew: false, gate, tools, ...(await this.#context(view, threadId, rows, gate, tools, deadline)) };
  }

  /**
   * The thread's context for this turn, and its input items. The system prompt is built here,
   * so that an input that could never fit the context window is refused (400) before anything
   * is stored.
   */
  async #context(
    req: Pick<TurnRequest, "userId" | "externalTools" | "store" | "memory"> & { messages: InputItem[]; toolOutputs: ToolOutputInput[] },
    threadId: string,
    rows: ThreadContextRows | undefined,
    gate: Gate | undefined,
    threadTools: ExternalTool[] | undefined,
    /** When the turn times out: the summaries and the memory step do not retry past it either. */
    deadline?: number,
    /** Refuse (400) an input that could never fit: what a turn does before it stores anything. */
    check = true,
  ): Promise<Pick<Prepared, "context" | "input" | "policy" | "meter" | "stored"> & { offered: readonly ToolSpec[] }> {
    const { deps } = this;
    const policy = withMemory(await deps.policies(req.userId), req.memory);
    const meter = new TurnMeter(deps.usage?.prices ?? {});
    const llm = meter.wrap(deps.llm);
    const context = new ThreadContext(
      {
        llm: deadline ? { ...llm, stream: (r) => llm.stream({ ...r, deadline: r.deadline ?? deadline }) } : llm,
        settings: deps.context,
        calibrations: this.#calibrations,
        noteTool: deps.tools.specs().find((t) => t.name === "memory_write"),
        notes: deps.notes,
        redact: this.#redact,
        // a turn that stores nothing (store: false) leaves its thread as it was
        store: req.store === false ? async () => {} : (id, item, seq) => storeCompaction(deps.db, id, item, seq),
        log: this.#contextLog,
      },
      {
        threadId,
        userId: req.userId,
        system: systemPrompt(identityTold(await deps.identity(req.userId), req.memory === "none")),
        compaction: rows?.compaction,
        history: rows?.history ?? [],
        nextSeq: rows?.nextSeq ?? 0,
        awaited: gate?.kind === "external_tool" ? gate.callId : undefined,
        policy,
      },
    );
    const input = [...req.toolOutputs.map((o) => ({ type: "function_call_output" as const, ...o })), ...req.messages].map(storedItem);
    const offer = new ToolOffer({ registry: deps.tools, external: req.externalTools ?? threadTools ?? [], policy, budget: context.budget });
    const offered = offer.specs();
    if (check) context.checkInput(input, offered);
    return { context, input, policy, meter, offered, stored: 0 };
  }

  /**
   * Runs the accepted turn to its end and stores it, with what it cost; it counts as running
   * until it is stored. The bus hears its end (`turn.completed`) once it is stored.
   */
  async #execute(req: TurnRequest, turn: TurnHandle, prepared: Prepared, info: TurnInfo, requestedAt: number): Promise<TurnResult> {
    const startedAt = info.startedAt;
    const external = req.externalTools ?? prepared.tools ?? [];
    prepared.meter.ended = (e) => this.bus.publish(info, e);
    let waiting: "approval" | "oauth" | null = null;
    const run = this.#running.run(turn.id, req.userId, { timeoutMs: req.timeoutMs, since: requestedAt }, async (signal) => {
      const ran = await this.#drive(req, turn, prepared, external, signal, requestedAt, info);
      if (ran.gate?.kind === "approval" || ran.gate?.kind === "oauth") waiting = ran.gate.kind;
      // a recovered turn's answer is what it said before it stopped and after
      const items = [...(prepared.recovering?.output ?? []), ...ran.produced];
      const result: TurnResult = {
        id: turn.id,
        threadId: turn.threadId,
        createdAt: turn.createdAt,
        model: req.model,
        status: ran.error ? "failed" : "completed",
        error: ran.error,
        items,
        output: items.slice(turn.input.length),
        usage: prepared.meter.total(),
        tools: external,
        ...(waiting ? { waiting } : {}),
      };
      if (req.store !== false) await this.#records.commit(req, turn, prepared, result, ran);
      // what it cost counts whether or not the turn is kept
      this.deps.usage?.ledger.add(prepared.meter.rows({ responseId: turn.id, userId: req.userId, threadId: turn.threadId, channel: req.channel, routineId: req.origin?.routineId ?? null }));
      return result;
    });
    try {
      const result = await run;
      logTurn(this.deps.log, result, req, startedAt);
      await this.#spent(req.userId, result.usage.costUsd, info);
      this.bus.publish(info, { type: "turn.completed", result, waiting });
      return result;
    } catch (e) {
      // not the turn's failure but the service's (the store is down): said once, here
      this.deps.log?.error("turn", { response_id: turn.id, thread_id: turn.threadId, user_id: req.userId, channel: req.channel, status: "lost", duration_ms: Date.now() - startedAt, error: (e as Error).message });
      this.bus.publish(info, { type: "turn.completed", error: e as Error, waiting: null });
      throw e;
    }
  }

  /** A turn's cost counted against the user's budgets: past 80 % of one, the user is told (and the log). */
  async #spent(userId: string, costUsd: number, info: TurnInfo): Promise<void> {
    const warning = await this.deps.usage?.budgets?.recorded(userId, costUsd).catch((e) => void this.deps.log?.error("budget", { error: (e as Error).message }));
    if (warning) this.bus.publish(info, { type: "budget.warning", message: warning });
  }

  /** The agent loop over this turn, its events passed on; a turn cut short or failed ends with its error. */
  async #drive(
    req: TurnRequest,
    turn: TurnHandle,
    prepared: Prepared,
    external: ExternalTool[],
    signal: AbortSignal,
    requestedAt: number,
    info: TurnInfo,
  ): Promise<Ran> {
    const { deps } = this;
    const { gate, recovering } = prepared;
    const produced = [...turn.input, ...(recovering?.interrupted ?? [])];
    try {
      // over a budget: the turn fails before the model is asked anything
      await deps.usage?.budgets?.check(req.userId);
      await deps.toolsReady?.(signal);
      // "always" is per destination for a call that could carry data out, never for an identity file's change
      const decision = req.input.kind === "approval" ? req.input.decision : undefined;
      if (decision === "always" && gate?.kind === "approval" && !gate.details.diff) {
        await deps.allowAlways(req.userId, gate.details.destination ? egressKey(gate.details.destination) : gate.details.tool);
      }
      const trust = new TurnTrust({
        tainted: prepared.context.tainted || turn.input.some(isUntrusted),
        userWords: [...prepared.context.userWords(), ...turn.input.flatMap((i) => (i.type === "message" && i.role === "user" && !isUntrusted(i) ? [i.content] : []))],
        destinations: (await deps.destinations?.(req.userId)) ?? (() => undefined),
      });
      const loop = agentLoop({
        llm: prepared.meter.wrap(deps.llm),
        tools: deps.tools,
        external,
        context: prepared.context,
        pending: recovering?.pending ?? gate?.pending ?? [],
        maxSteps: deps.maxSteps,
        ctx: { userId: req.userId, threadId: turn.threadId, signal },
        llmOptions: req.llmOptions,
        deadline: req.timeoutMs ? requestedAt + req.timeoutMs : undefined,
        produced,
        safety: deps.safety,
        policy: prepared.policy,
        decision: decision && gate ? { callId: gate.callId, approve: decision !== "deny" } : undefined,
        authorize: deps.authorization && ((tool) => deps.authorization!(tool, req.userId, turn.threadId)),
        trust,
        checkpoint: durable(req) ? () => this.#records.checkpoint(turn, prepared, produced) : undefined,
        egressed: (call, destination, approvedBy) => {
          const entry = { userId: req.userId, threadId: turn.threadId, responseId: turn.id, tool: call.name, destination, approvedBy, createdAt: Date.now() };
          deps.recordEgress?.(entry).catch((e) => deps.log?.error("egress log", { error: (e as Error).message, ...entry }));
        },
      });
      for (;;) {
        const next = await loop.next();
        if (next.done) return { produced, ...gateOf(next.value, turn.id, req.surfacesGates ?? false, deps.gateUrl(turn.threadId)) };
        this.bus.publish(info, next.value);
      }
    } catch (e) {
      const reason = signal.aborted ? signal.reason : e;
      if (!(reason instanceof TurnError)) throw reason;
      // a provider's error text may quote a key: it reaches the caller redacted
      return { produced, gate: null, error: { code: reason.code, message: deps.safety.redact(reason.message) } };
    }
  }
}

/** The policy with the memory tools a turn may not use denied (a named webhook source's `memory` setting). */
function withMemory(policy: (tool: string) => ApprovalPolicy, memory: TurnRequest["memory"]): (tool: string) => ApprovalPolicy {
  if (!memory || memory === "full") return policy;
  return (tool) => (tool.startsWith("memory_") && (memory === "none" || tool === "memory_write") ? "deny" : policy(tool));
}
