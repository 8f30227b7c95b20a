import { toChatMessages } from "../conversation/history";
import { itemId } from "../conversation/ids";
import { isUntrusted, type ConversationItem } from "../conversation/items";
import type { ApprovalPolicy } from "../config/schema";
import { InvalidRequest, TurnError } from "../errors";
import type { ChatMessage, Llm, ToolSpec } from "../llm/types";
import type { Logger } from "../log";
import type { Placed } from "../store/compactions";
import { contextBudget, type ContextBudget, type ContextSettings } from "./budget";
import type { CompactionItem } from "../conversation/items";
import { rawItemTokens, rawMessageTokens, rawToolTokens, type Calibrations } from "./estimate";
import { memoryFlush, redactMessage, type NoteStore } from "./flush";
import { isContextOverflow, reportedPromptTokens } from "./overflow";
import { chooseCut, safeCuts, total, trimOutputs, trimToFit, type Sized } from "./plan";
import { summarise } from "./summarise";
import { memoByObject, memoByText } from "../memo";

/** What every thread's context shares: the LLM, the settings, what the service has learnt of its tokens. */
export interface ContextDeps {
  llm: Llm;
  settings: ContextSettings;
  calibrations: Calibrations;
  /** memory_write as the model knows it: the silent memory step's only tool. */
  noteTool: ToolSpec | undefined;
  notes: NoteStore | undefined;
  redact: (text: string) => string;
  /** Stores a compaction at a seq and points the thread at it. */
  store: (threadId: string, item: CompactionItem, seq: number) => Promise<void>;
  log: Pick<Logger, "warn">;
}

/** A thread as a turn found it: the latest summary and the stored items after it. */
export interface ThreadState {
  threadId: string;
  userId: string;
  /** The system prompt (identity files included), without the summary. */
  system: string;
  compaction: CompactionItem | undefined;
  history: Placed<ConversationItem>[];
  nextSeq: number;
  /** The caller-tool call the thread's gate waits on: nothing after it may be summarised. */
  awaited?: string;
  policy: (tool: string) => ApprovalPolicy;
}

export type Usage = { inputTokens: number; outputTokens: number };

/** A model step's messages (redacted), and what was done to make them fit. */
export interface StepMessages {
  messages: ChatMessage[];
  /** A compaction stored to make room, if one was. */
  compacted?: CompactionItem;
  /** Tokens spent on the memory step and the summary. */
  usage: Usage;
}

const SUMMARY_HEADING =
  "# Summary of the earlier conversation\n\nThe older turns of this thread were summarised to fit your context window; this summary stands in for them. Notes saved to memory (memory_search) may hold more.";
/** The least a tool output of this turn keeps when nothing else is left to trim. */
const MIN_OUTPUT_TOKENS = 200;

/**
 * A thread's context for one turn (or one manual compaction). It builds each model step's
 * messages within the budget: older turns' tool outputs and call arguments trimmed first,
 * then this turn's (just enough), then older turns summarised into a stored compaction
 * (after the silent memory step), then whatever is left trimmed to its least. This turn's
 * items are never summarised, even when its input is stored already (see `stored`).
 */
export class ThreadContext {
  readonly budget: ContextBudget;
  #compaction: CompactionItem | undefined;
  #history: Placed<ConversationItem>[];
  #nextSeq: number;
  /** Where this turn's items start: a summary made during the turn keeps them from there on. */
  readonly #turnStart: number;
  /** After an overflow: the most a prompt may take, three quarters of the one refused. */
  #ceiling = Infinity;
  /** The provider's refusal, told again when nothing can make the step small enough. */
  #refusal: unknown;
  /** The raw estimate of the last step request, for calibration. */
  #lastRaw = 0;
  /** What of it the system prompt and the tools took (calibrated): no fitting goes below that. */
  #lastFixed = 0;

  constructor(
    private readonly deps: ContextDeps,
    private readonly state: ThreadState,
  ) {
    this.budget = contextBudget(deps.settings);
    this.#compaction = state.compaction;
    this.#history = state.history;
    this.#nextSeq = state.nextSeq;
    this.#turnStart = state.nextSeq;
  }

  /** The thread holds untrusted content the model still sees (or a summary of some): its turns start tainted. */
  get tainted(): boolean {
    return (this.#compaction !== undefined && isUntrusted(this.#compaction)) || this.#history.some((p) => isUntrusted(p.item));
  }

  /** What the user wrote in the thread, as far as the model still sees it verbatim. */
  userWords(): string[] {
    return this.#history.flatMap((p) => (p.item.type === "message" && p.item.role === "user" && !isUntrusted(p.item) ? [p.item.content] : []));
  }

  /** Where the items of this turn still to be stored go in the thread. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** The turn's first `n` items (its input) were stored at `nextSeq` before it ran: the rest go after them. */
  stored(n: number): void {
    this.#nextSeq += n;
  }

  /** A 400 before anything is stored when the new input could never fit, whatever is summarised. */
  checkInput(current: ConversationItem[], tools: readonly ToolSpec[]): void {
    const need = this.#fixed(tools) + total(trimOutputs(this.#sized(current), 0, MIN_OUTPUT_TOKENS, this.#size));
    if (need <= this.budget.prompt) return;
    throw new InvalidRequest(
      `The input is too long for the model's context: with the instructions and tool definitions it takes about ${need} tokens, ` +
        `and a request may take ${this.budget.prompt} (LLM_CONTEXT_WINDOW ${this.budget.window} less ${this.budget.reserve} kept for the answer). ` +
        "Send a shorter input, or configure a model with a larger context window.",
      "context_length_exceeded",
    );
  }

  /** What a step with these items would take as things stand, before anything is made to fit. */
  measure(current: ConversationItem[], tools: readonly ToolSpec[]): number {
    return this.#fixed(tools) + total(this.#sized([...this.#history.map((p) => p.item), ...current]));
  }

  /**
   * One summary of everything the model sees of the thread (its summary and the items after
   * it) and of `current`, stored nowhere, with no memory step: the stateless compaction of
   * `responses.compact`. Untrusted when anything it summarises was; `items` are the items it summarised.
   */
  async summariseAll(current: ConversationItem[], signal: AbortSignal): Promise<{ summary: string; untrusted: boolean; usage: Usage; items: ConversationItem[] }> {
    const items = [...this.#history.map((p) => p.item), ...current];
    const { summary, usage } = await summarise(this.#summariser(), this.#compaction?.summary, items, signal);
    return { summary, untrusted: (this.#compaction !== undefined && isUntrusted(this.#compaction)) || items.some(isUntrusted), usage, items };
  }

  /** The messages of the next model step, made to fit. */
  async step(current: ConversationItem[], tools: readonly ToolSpec[], signal: AbortSignal): Promise<StepMessages> {
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let compacted: CompactionItem | undefined;
    for (;;) {
      const fixed = this.#fixed(tools);
      // the calibration is learnt from requests of another mix (tools come and go with tool_search): 2 % to spare
      const limit = Math.floor(Math.min(this.budget.prompt, this.#ceiling) * 0.98) - fixed;
      let cur = this.#sized(current);
      // 1. older turns' tool outputs (and call arguments) are trimmed first
      const history = trimOutputs(this.#sized(this.#history.map((p) => p.item)), limit - total(cur), this.#oldOutputTokens(), this.#size);
      const fits = (view: Sized[]) => total(view) <= limit;
      if (fits([...history, ...cur])) return { messages: this.#messages([...history, ...cur], tools), compacted, usage };
      // 2. this turn's own may take what older turns leave, and at least half
      cur = trimToFit(cur, Math.max(Math.floor(limit / 2), limit - total(history)), MIN_OUTPUT_TOKENS, this.#size);
      if (fits([...history, ...cur])) return { messages: this.#messages([...history, ...cur], tools), compacted, usage };
      // 3. older turns are summarised
      if (!compacted) {
        const r = await this.#compact(this.#ceiling < Infinity ? "overflow" : "auto", current, limit, signal);
        add(usage, r.usage);
        if ((compacted = r.item)) continue;
      }
      // 4. last, whatever tool output or arguments are left are trimmed to their least
      const squeezed = trimToFit([...history, ...cur], limit, MIN_OUTPUT_TOKENS, this.#size);
      if (fits(squeezed)) return { messages: this.#messages(squeezed, tools), compacted, usage };
      if (this.#refusal !== undefined) throw this.#refusal;
      throw new TurnError(
        "llm_error",
        `This turn no longer fits in the model's context: its messages and tool results take about ${total(squeezed)} tokens after trimming, ` +
          `more than the ${limit} a request may take (LLM_CONTEXT_WINDOW ${this.budget.window} less ${this.budget.reserve} kept for the answer).`,
      );
    }
  }

  /** The provider's count of the last step request's prompt. */
  observe(promptTokens: number): void {
    this.#cal().observe(this.#lastRaw, promptTokens);
  }

  /**
   * The provider refused the last step as too long: true (once a turn) when a smaller one is
   * worth a retry, false when even the system prompt and the tools leave no room for it.
   */
  overflowed(error: unknown): boolean {
    if (this.#refusal !== undefined || !isContextOverflow(error)) return false;
    this.#refusal = error;
    const reported = reportedPromptTokens(error);
    this.#ceiling = Math.floor((reported ?? this.#cal().scale(this.#lastRaw)) * 0.75);
    this.#cal().overflowed(this.#lastRaw, reported);
    return this.#ceiling > this.#lastFixed;
  }

  /** Summarises all stored turns but the latest, on demand (`/compact`). */
  compact(signal: AbortSignal): Promise<{ item?: CompactionItem; usage: Usage }> {
    const history = this.#history;
    const cuts = safeCuts(history.map((p) => p.item), this.state.awaited).filter((c) => c.turnStart && c.index > 0);
    return this.#summarise("manual", cuts.at(-1)?.index ?? 0, signal);
  }

  /**
   * Summarises older stored turns so that the kept ones take half of `room` (what a request
   * has beside the system prompt and tools) less the summary and this turn, or a quarter after
   * an overflow: the next compaction is then many turns away.
   */
  #compact(trigger: "auto" | "overflow", current: ConversationItem[], room: number, signal: AbortSignal): Promise<{ item?: CompactionItem; usage: Usage }> {
    const keep = Math.floor((room - this.budget.summary) * (trigger === "overflow" ? 0.25 : 0.5)) - total(this.#sized(current));
    const history = trimOutputs(this.#sized(this.#history.map((p) => p.item)), 0, this.#oldOutputTokens(), this.#size);
    return this.#summarise(trigger, chooseCut(history, current, keep, this.state.awaited), signal);
  }

  /** The memory step, the summary of the stored items before `cut`, and the compaction stored. */
  async #summarise(trigger: CompactionItem["trigger"], cut: number, signal: AbortSignal): Promise<{ item?: CompactionItem; usage: Usage }> {
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    const history = this.#history;
    if (cut === 0) return { usage };
    const older = history.slice(0, cut).map((p) => p.item);
    let notes = 0;
    if (this.deps.settings.memoryFlush) {
      const f = await memoryFlush(
        { ...this.deps, tool: this.deps.noteTool, budget: this.budget, calibration: this.#cal(), policy: this.state.policy },
        { system: this.#system(), items: older },
        { userId: this.state.userId, signal, tainted: this.tainted },
        this.deps.log,
      );
      notes = f.notes;
      add(usage, f.usage);
    }
    const model = this.deps.settings.compactionModel;
    const s = await summarise(
      this.#summariser(),
      this.#compaction?.summary,
      older,
      signal,
    ).catch((e) => {
      if (signal.aborted) throw e;
      const why = `Older turns had to be summarised to fit the context window, and the summary failed${model ? ` (LLM_COMPACTION_MODEL ${model})` : ""}: ${(e as Error).message}`;
      throw Object.assign(new TurnError(e instanceof TurnError ? e.code : "llm_error", why), { cause: e });
    });
    add(usage, s.usage);
    const seq = this.#nextSeq;
    const item: CompactionItem = {
      type: "compaction",
      id: itemId(),
      summary: s.summary,
      first_kept_seq: history[cut]?.seq ?? Math.min(seq, this.#turnStart),
      summarised_items: (this.#compaction?.summarised_items ?? 0) + cut,
      trigger,
      memory_notes: notes,
      created_at: Math.floor(Date.now() / 1000),
      ...((this.#compaction && isUntrusted(this.#compaction)) || older.some(isUntrusted) ? { untrusted: true } : {}),
    };
    await this.deps.store(this.state.threadId, item, seq);
    this.#nextSeq = seq + 1;
    this.#history = history.slice(cut);
    this.#compaction = item;
    return { item, usage };
  }

  /** The summariser: `llm.compactionModel` when set, with that model's calibration. */
  #summariser() {
    const model = this.deps.settings.compactionModel;
    return { llm: this.deps.llm, model, budget: this.budget, calibration: this.deps.calibrations.for(model ?? this.deps.llm.model), redact: this.deps.redact };
  }

  #cal() {
    return this.deps.calibrations.for(this.deps.llm.model);
  }

  #size = (item: ConversationItem): number => this.#cal().scale(rawItemTokens(item));

  #sized(items: ConversationItem[]): Sized[] {
    return items.map((item) => ({ item, tokens: this.#size(item) }));
  }

  /** Older turns' tool outputs and arguments longer than this are trimmed first when a request would not fit. */
  #oldOutputTokens(): number {
    return Math.max(256, Math.floor(this.budget.prompt / 16));
  }

  #system(): string {
    const c = this.#compaction;
    return c ? `${this.state.system}\n\n${SUMMARY_HEADING}\n\n${c.summary}` : this.state.system;
  }

  /** The system prompt (with the summary) and the tool definitions, as the provider will count them. */
  #fixed(tools: readonly ToolSpec[]): number {
    return this.#cal().scale(rawMessageTokens({ role: "system", content: this.#system() }) + rawToolTokens(tools));
  }

  #messages(view: Sized[], tools: readonly ToolSpec[]): ChatMessage[] {
    // nothing that looks like a credential reaches the model, whoever wrote it
    const system = { role: "system" as const, content: redactedSystems(this.deps.redact)(this.#system()) };
    const messages = [system, ...toChatMessages(view.map((s) => s.item)).map((m) => redactMessage(m, this.deps.redact))];
    const fixed = rawMessageTokens(messages[0]!) + rawToolTokens(tools);
    this.#lastRaw = view.reduce((n, s) => n + rawItemTokens(s.item), fixed);
    this.#lastFixed = this.#cal().scale(fixed);
    return messages;
  }
}

/**
 * System prompts redacted lately, per redactor: a user's prompt is the same turn after turn
 * (identity files change seldom), and redacting it is most of what a short step's messages cost.
 */
const redactedSystems = memoByObject((redact: (text: string) => string) => memoByText(redact));

function add(to: Usage, u: Usage): void {
  to.inputTokens += u.inputTokens;
  to.outputTokens += u.outputTokens;
}
