// GET /api/chat/history: the record of a conversation as the chat UIs show it, in the same
// items the event stream gives live (messages, tool calls that ran, failed or were refused,
// approval prompts with their decision, compaction marks), so a reload changes nothing.
import type { CompactionItem, ConversationItem } from "../conversation/items";
import { isoFromSeconds } from "../http/time";
import { unwrapToolOutput } from "../safety/injection";
import { forksOf } from "../store/branches";
import { approvalDecisions, failedTurns, promptFacts } from "../store/chat-threads";
import { loadTimeline, type Placed } from "../store/compactions";
import { getGate, type ThreadRow } from "../store/conversations";
import type { Db } from "../store/db";
import type { History, HistoryItem, Waiting } from "./chat-wire";
import { compactionMark } from "./events";

/** How the loop and the tool registry word a call that did not run or failed (an output item keeps no flag of its own). */
const FAILED = /^Error: /;

/** `running`: whether a turn is still running (its stored response says `shutdown` until it ends). */
export async function threadHistory(db: Db, thread: Pick<ThreadRow, "id" | "title">, running: (responseId: string) => boolean): Promise<History> {
  const [timeline, decisions, forks, gate, failed, facts] = await Promise.all([
    loadTimeline(db, thread.id),
    approvalDecisions(db, thread.id),
    forksOf(db, thread.id),
    getGate(db, thread.id),
    failedTurns(db, thread.id),
    promptFacts(db, thread.id),
  ]);
  const endings = new Map(
    failed.flatMap((f): [string, HistoryItem][] =>
      f.lastItem && !running(f.id)
        ? [[f.lastItem, { type: "turn_error", id: `end-${f.id}`, response_id: f.id, code: f.error?.code ?? null, message: f.error?.message ?? "The reply failed." }]]
        : [],
    ),
  );
  return {
    thread_id: thread.id,
    title: thread.title,
    items: historyItems(timeline, {
      endings,
      decisions: new Map(decisions.map((d) => [d.call_id, d])),
      branchAt: (before) => {
        const f = forks.get(before);
        return f && f.count > 1 ? f : undefined;
      },
    }),
    waiting: gate ? { ...waiting(gate), ...(gate.kind === "approval" ? facts : {}) } : null,
  };
}

type Decisions = Map<string, Awaited<ReturnType<typeof approvalDecisions>>[number]>;

/**
 * The items in order, with a mark before the first item each compaction kept (where the
 * summary starts to stand in), each decided approval before the call it decided, and on a
 * user message where the conversation forks, which of its alternatives this is.
 */
function historyItems(
  timeline: Placed<ConversationItem | CompactionItem>[],
  o: { decisions: Decisions; branchAt: (before: string) => { current: number; count: number } | undefined; endings: Map<string, HistoryItem> },
): HistoryItem[] {
  // people see the tool's output, not the <tool_output> wrapper the model gets it in
  const outputs = new Map(timeline.flatMap(({ item: i }) => (i.type === "function_call_output" ? [[i.call_id, unwrapToolOutput(i.output)] as const] : [])));
  const at = (p: Placed<ConversationItem | CompactionItem>) => (p.item.type === "compaction" ? p.item.first_kept_seq - 0.5 : p.seq);
  let before = "";
  return [...timeline]
    .sort((a, b) => at(a) - at(b))
    .flatMap(({ item }): HistoryItem[] => {
      const shown = shownItems(item);
      const ending = o.endings.get(item.id);
      return ending ? [...shown, ending] : shown;
    });

  function shownItems(i: ConversationItem | CompactionItem): HistoryItem[] {
    if (i.type === "compaction") return [compactionMark(i)];
    const previous = before;
    before = i.id;
    if (i.type === "message") {
      const branch = i.role === "user" ? o.branchAt(previous) : undefined;
      return [{ type: "message", id: i.id, role: i.role, content: i.content, ...(i.status ? { status: i.status } : {}), ...(branch ? { branch } : {}) }];
    }
    if (i.type !== "function_call") return [];
    const output = outputs.get(i.call_id) ?? null;
    const d = o.decisions.get(i.call_id);
    const call: HistoryItem = {
      type: "tool_call",
      id: i.id,
      call_id: i.call_id,
      name: i.name,
      arguments: i.arguments,
      output,
      is_error: d?.decision === "deny" || (output !== null && FAILED.test(output)),
      external: i.external,
    };
    if (!d) return [call];
    const facts = { ...(d.destination ? { destination: d.destination } : {}), ...(d.diff ? { diff: d.diff } : {}) };
    const approval: HistoryItem = { type: "approval", id: `approval-${i.call_id}`, call_id: i.call_id, tool: d.tool, arguments: d.arguments, ...facts, decision: d.decision, decided_at: isoFromSeconds(d.decided_at) };
    return [approval, call];
  }
}

/** What the thread waits on. */
function waiting(gate: NonNullable<Awaited<ReturnType<typeof getGate>>>): Waiting {
  return {
    kind: gate.kind,
    call_id: gate.callId,
    tool: "details" in gate ? gate.details.tool : null,
    arguments: "details" in gate ? gate.details.arguments : null,
    // an OAuth gate: the extension to connect, and the page that does it
    ...(gate.kind === "oauth" ? { extension: gate.details.extension, connect_url: gate.details.connect_url } : {}),
  };
}
