// What a chat UI shows of a thread, from its stored history and the events of its live turns.
// Pure functions: each returns a new view and leaves the one it was given as it was. The web
// UI and the TUI render the same items, each in its own way.
import type { BranchState, ChatEvent, Decision, History } from "../gateway/chat-wire";

/** What an approval prompt shows besides the call: where its data would go, an identity file's change. */
export interface PromptFacts {
  destination?: string;
  diff?: string;
}

/** One thing shown in a conversation. */
export type ViewItem =
  /** `branch`: the conversation forks here (regenerated or edited), and which alternative this is. */
  | { kind: "user"; id: string; text: string; branch?: BranchState }
  /** `cutShort`: stored incomplete (stopped, timed out, the service stopped, the model failed). */
  | { kind: "assistant"; id: string; text: string; streaming: boolean; cutShort: boolean }
  /** The model's reasoning in one step, seen live only (it is not stored): shown collapsed. */
  | { kind: "reasoning"; id: string; text: string; streaming: boolean }
  /** `refused`: the person denied it in an approval prompt (it did not run). */
  | { kind: "tool"; id: string; callId: string; name: string; arguments: string; output: string | null; isError: boolean; refused: boolean }
  | ({ kind: "approval"; id: string; threadId: string; callId: string; tool: string; arguments: string; decided: Decision | null; busy: boolean; error: string | null } & PromptFacts)
  /** The tool's extension must be connected (OAuth) at `url` before the turn goes on. */
  | { kind: "connect"; id: string; callId: string; tool: string; extension: string; url: string }
  | { kind: "notice"; id: string; tone: "error" | "info"; text: string }
  /** Where the model's view of the thread starts to be a summary of the items above. */
  | { kind: "compaction"; id: string; summary: string; summarisedItems: number; memoryNotes: number };

export type ItemOf<K extends ViewItem["kind"]> = Extract<ViewItem, { kind: K }>;

/** A turn seen live: sent from here, or announced on the event stream. */
export interface LiveTurn {
  /** The response id once known; a local key until the send is accepted. */
  key: string;
  responseId: string | null;
  items: ViewItem[];
  running: boolean;
  /** Stop was asked for (the response is cancelled once its id is known). */
  stopRequested: boolean;
  /** When it stopped running, on the chat model's clock (see `withHistory`). */
  endedAt?: number;
}

export interface ThreadView {
  /** What the server had stored when the thread was last loaded. */
  history: ViewItem[];
  /** Turns since then, in order; finished ones are dropped on the next load. */
  live: LiveTurn[];
}

/** The sentences the reducer writes itself: each UI words them its own way. */
export interface Wording {
  /** A turn that was cancelled. */
  cancelled: string;
}

export const EMPTY_THREAD: ThreadView = { history: [], live: [] };

export const itemsOf = (t: ThreadView): ViewItem[] => [...t.history, ...t.live.flatMap((turn) => turn.items)];

export const liveTurn = (key: string, responseId: string | null, items: ViewItem[] = []): LiveTurn => ({
  key,
  responseId,
  items,
  running: true,
  stopRequested: false,
});

/** A thread's stored history, with the gate it waits on last. */
export function historyItems(threadId: string, h: History, words: Wording = { cancelled: "Stopped." }): ViewItem[] {
  const denied = new Set(h.items.flatMap((i) => (i.type === "approval" && i.decision === "deny" ? [i.call_id] : [])));
  const items = h.items.map((i): ViewItem => {
    switch (i.type) {
      case "compaction":
        return { kind: "compaction", id: i.id, summary: i.summary, summarisedItems: i.summarised_items, memoryNotes: i.memory_notes };
      case "tool_call":
        return { kind: "tool", id: i.id, callId: i.call_id, name: i.name, arguments: i.arguments, output: i.output, isError: i.is_error, refused: denied.has(i.call_id) };
      case "approval":
        return { ...approvalItem(threadId, i.call_id, i.tool, i.arguments, i), decided: i.decision };
      case "turn_error":
        return endingNotice(i.response_id, i.code, i.message, words);
    }
    if (i.role === "user") return { kind: "user", id: i.id, text: i.content, ...(i.branch ? { branch: i.branch } : {}) };
    return { kind: "assistant", id: i.id, text: i.content, streaming: false, cutShort: i.status === "incomplete" };
  });
  const w = h.waiting;
  if (w?.kind === "approval") items.push(approvalItem(threadId, w.call_id, w.tool ?? "a tool", w.arguments ?? "", w));
  else if (w?.kind === "oauth") items.push(connectItem(w.call_id, w.tool ?? "a tool", w.extension ?? "an extension", w.connect_url ?? ""));
  return items;
}

/**
 * The stored part replaced. The turns still running are kept, and those that ended after
 * `asOf` (the history may have been read before they were stored) with what the history
 * does not hold already.
 */
export function withHistory(t: ThreadView, threadId: string, h: History, words?: Wording, asOf = Number.POSITIVE_INFINITY): ThreadView {
  const history = historyItems(threadId, h, words);
  const stored = new Set(history.flatMap((i) => ("callId" in i ? [i.id, i.callId] : [i.id])));
  const unseen = (i: ViewItem) => !stored.has(i.id) && !("callId" in i && stored.has(i.callId));
  const live = t.live
    .filter((turn) => turn.running || (turn.endedAt ?? 0) > asOf)
    .map((turn) => (turn.running ? turn : { ...turn, items: turn.items.filter(unseen) }))
    .filter((turn) => turn.running || turn.items.length);
  return { history, live };
}

/** One event of the thread, put in the live turn of its response. */
export function applyEvent(t: ThreadView, e: ChatEvent, words: Wording): ThreadView {
  // decided here or in another client: the prompt wherever it is shows the decision
  if (e.type === "approval.decided") return withApproval(t, e.call_id, { decided: e.decision, busy: false, error: null });
  const view = eventView(t, e, words);
  if (e.type !== "tool.completed" || !e.is_error) return view;
  // a call the person denied did not fail: it was refused, and says so as the history will
  const denied = itemsOf(view).some((i) => i.kind === "approval" && i.callId === e.call_id && i.decided === "deny");
  return denied ? mapItems(view, (i) => (i.kind === "tool" && i.callId === e.call_id ? { ...i, refused: true } : i)) : view;
}

function eventView(t: ThreadView, e: ChatEvent, words: Wording): ThreadView {
  // a prompt shown already (from the history, or by another turn) is not asked again
  const prompt = e.type === "approval.required" ? "approval" : e.type === "auth.required" ? "connect" : undefined;
  if (prompt && "call_id" in e && itemsOf(t).some((i) => i.kind === prompt && "callId" in i && i.callId === e.call_id)) return t;
  const at = t.live.findIndex((turn) => turn.responseId === e.response_id);
  const turn = at >= 0 ? t.live[at]! : liveTurn(e.response_id, e.response_id);
  const next = turnEvent(turn, e, words);
  const view = { history: t.history, live: at >= 0 ? t.live.with(at, next) : [...t.live, next] };
  // the call runs, so a connection it waited for has been made (perhaps in another tab)
  return e.type === "tool.started" ? withoutItems(view, (i) => i.kind === "connect" && i.callId === e.call_id) : view;
}

function turnEvent(turn: LiveTurn, e: ChatEvent, words: Wording): LiveTurn {
  const items = turn.items;
  const itemId = "item_id" in e ? e.item_id : "";
  const assistant = (text: string, streaming: boolean) => (): ItemOf<"assistant"> => ({ kind: "assistant", id: itemId, text, streaming, cutShort: false });
  const isMessage = (i: ItemOf<"assistant">) => i.id === itemId;
  const isCall = (i: { callId: string }) => "call_id" in e && i.callId === e.call_id;
  switch (e.type) {
    case "turn.started": {
      // a turn started elsewhere (the API, a webhook job, a routine) says so while it runs
      const origin = liveLabel(e);
      if (!origin || items.some((i) => i.id === origin.id)) return { ...turn, running: true };
      return { ...turn, running: true, items: [origin, ...items] };
    }
    case "budget.warning":
      return { ...turn, items: upsert(items, "notice", (n) => n.id === `budget-${e.response_id}`, (n) => n, () => ({ kind: "notice", id: `budget-${e.response_id}`, tone: "info", text: e.message })) };
    case "message.started": {
      // the answer begins: the reasoning before it is over
      const thought = items.map((i) => (i.kind === "reasoning" && i.streaming ? { ...i, streaming: false } : i));
      return { ...turn, items: upsert(thought, "assistant", isMessage, (m) => m, assistant("", true)) };
    }
    case "message.delta":
      return { ...turn, items: upsert(items, "assistant", isMessage, (m) => ({ ...m, text: m.text + e.delta }), assistant(e.delta, true)) };
    case "message.completed": {
      const cutShort = e.status === "incomplete";
      // an empty message is a step that only called tools (unless it was cut: that is said)
      if (!e.text && !cutShort) return { ...turn, items: items.filter((i) => !(i.kind === "assistant" && isMessage(i))) };
      const done = (m: ItemOf<"assistant">) => ({ ...m, text: e.text, streaming: false, cutShort });
      return { ...turn, items: upsert(items, "assistant", isMessage, done, () => done(assistant(e.text, false)())) };
    }
    case "reasoning.delta": {
      const grow = (r: ItemOf<"reasoning">) => ({ ...r, text: r.text + e.delta });
      return { ...turn, items: upsert(items, "reasoning", (r) => r.id === itemId, grow, () => ({ kind: "reasoning", id: itemId, text: e.delta, streaming: true })) };
    }
    case "tool.started":
      return {
        ...turn,
        items: upsert(items, "tool", isCall, (c) => c, () => ({ kind: "tool", id: e.call_id, callId: e.call_id, name: e.name, arguments: e.arguments, output: null, isError: false, refused: false })),
      };
    case "tool.completed": {
      const done = { output: e.output, isError: e.is_error };
      const unseen = (): ItemOf<"tool"> => ({ kind: "tool", id: e.call_id, callId: e.call_id, name: "tool", arguments: "", refused: false, ...done });
      return { ...turn, items: upsert(items, "tool", isCall, (c) => ({ ...c, ...done }), unseen) };
    }
    case "approval.required":
      return { ...turn, items: [...items, approvalItem(e.thread_id, e.call_id, e.tool, e.arguments, e)] };
    case "auth.required":
      return { ...turn, items: [...items, connectItem(e.call_id, e.tool, e.extension, e.connect_url)] };
    case "thread.compacted":
    case "approval.decided":
      return turn; // the history, read again once the turn is stored, places the mark; a decision changes its prompt
    case "identity.changed":
      return { ...turn, items: [...items, { kind: "notice", id: `identity-${e.response_id}-${e.path}`, tone: "info", text: `${e.path} was changed.` }] };
    case "turn.completed": {
      const settled = items.map((i) => ((i.kind === "assistant" || i.kind === "reasoning") && i.streaming ? { ...i, streaming: false } : i));
      if (e.status !== "failed") return { ...turn, running: false, items: settled };
      const ending = () => endingNotice(e.response_id, e.error?.code ?? null, e.error?.message ?? "The reply failed.", words);
      return { ...turn, running: false, items: upsert(settled, "notice", (n) => n.id === `end-${e.response_id}`, (n) => n, ending) };
    }
  }
}

/** What a live turn started by another channel than the chat is labelled with. */
function liveLabel(e: Extract<ChatEvent, { type: "turn.started" }>): ItemOf<"notice"> | undefined {
  const by = e.routine_id ? "a routine" : e.channel === "webhook" ? "a webhook job" : e.channel === "responses" ? "the Responses API" : undefined;
  return by ? { kind: "notice", id: `origin-${e.response_id}`, tone: "info", text: `Started by ${by}.` } : undefined;
}

/** How a failed or stopped turn ends, live and in the history alike. */
function endingNotice(responseId: string, code: string | null, message: string, words: Wording): ItemOf<"notice"> {
  const cancelled = code === "cancelled";
  return { kind: "notice", id: `end-${responseId}`, tone: cancelled ? "info" : "error", text: cancelled ? words.cancelled : message };
}

/** The item of `kind` that matches changed, or a new one added last (if `create` is given). */
function upsert<K extends ViewItem["kind"]>(
  items: ViewItem[],
  kind: K,
  match: (item: ItemOf<K>) => boolean,
  change: (item: ItemOf<K>) => ItemOf<K>,
  create?: () => ItemOf<K>,
): ViewItem[] {
  const at = items.findIndex((i) => i.kind === kind && match(i as ItemOf<K>));
  if (at >= 0) return items.with(at, change(items[at] as ItemOf<K>));
  return create ? [...items, create()] : items;
}

/** The thread with the approval prompt of this call changed. */
export function withApproval(t: ThreadView, callId: string, patch: Partial<Pick<ItemOf<"approval">, "decided" | "busy" | "error">>): ThreadView {
  const change = (items: ViewItem[]) => upsert(items, "approval", (a) => a.callId === callId, (a) => ({ ...a, ...patch }));
  return { history: change(t.history), live: t.live.map((turn) => ({ ...turn, items: change(turn.items) })) };
}

function mapItems(t: ThreadView, change: (item: ViewItem) => ViewItem): ThreadView {
  return { history: t.history.map(change), live: t.live.map((turn) => ({ ...turn, items: turn.items.map(change) })) };
}

export function withoutItems(t: ThreadView, drop: (item: ViewItem) => boolean): ThreadView {
  return {
    history: t.history.filter((i) => !drop(i)),
    live: t.live.map((turn) => ({ ...turn, items: turn.items.filter((i) => !drop(i)) })),
  };
}

/** Only what is still to be answered (the open prompts) and the turns still running. */
export function cleared(t: ThreadView): ThreadView {
  const open = (i: ViewItem) => (i.kind === "approval" && !i.decided) || i.kind === "connect";
  const kept = withoutItems(t, (i) => !open(i));
  return { history: kept.history, live: kept.live.filter((turn) => turn.running || turn.items.length) };
}

/** The approval prompt still waiting for a decision, if any. */
export const pendingApproval = (items: ViewItem[]): ItemOf<"approval"> | undefined =>
  items.findLast((i): i is ItemOf<"approval"> => i.kind === "approval" && !i.decided);

function approvalItem(threadId: string, callId: string, tool: string, args: string, facts: PromptFacts): ItemOf<"approval"> {
  const shown = { ...(facts.destination ? { destination: facts.destination } : {}), ...(facts.diff ? { diff: facts.diff } : {}) };
  return { kind: "approval", id: `approval-${callId}`, threadId, callId, tool, arguments: args, decided: null, busy: false, error: null, ...shown };
}

function connectItem(callId: string, tool: string, extension: string, url: string): ItemOf<"connect"> {
  return { kind: "connect", id: `connect-${callId}`, callId, tool, extension, url };
}
