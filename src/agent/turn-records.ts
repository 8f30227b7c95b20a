import type { ExternalTool } from "../conversation/items";
import type { ConversationItem } from "../conversation/items";
import { threadTitle } from "../conversation/title";
import type { ThreadContext } from "../context/thread-context";
import { Unavailable } from "../errors";
import { acknowledgeTurn, commitTurn, storeTurnItems, type Gate, type TurnRecord } from "../store/conversations";
import { storeUnavailable, type Db } from "../store/db";
import { microUsd, noUsage } from "../usage/prices";
import { inputItems, type TurnHandle, type TurnRequest, type TurnResult } from "./turn-types";

/** The error a turn stored before it ended carries until it does: what a kill leaves. */
export const STOPPED = { code: "shutdown", message: "The service stopped before this turn finished; send it again once the service is back." } as const;

/** What the store needs of a prepared turn: the thread's state and how much of the turn is stored. */
export interface StoredProgress {
  isNew: boolean;
  /** The caller tools the thread offered so far. */
  tools: ExternalTool[] | undefined;
  context: Pick<ThreadContext, "nextSeq" | "stored">;
  /** How many of the items the turn runs with (its input, then what it produces) are stored already. */
  stored: number;
}

/** What running the loop left: the items, and the gate or the error it ended on. */
export interface Ran {
  produced: ConversationItem[];
  gate: Gate | null;
  error: TurnResult["error"];
}

/** A turn whose caller is answered before it ends is stored before that answer (`TurnRequest.background`). */
export const acknowledgedEarly = (req: TurnRequest) => req.background === true && req.store !== false;

/** A turn stored step by step, so that it can go on after a stop: an acknowledged one, or one going on. */
export const durable = (req: TurnRequest) => acknowledgedEarly(req) || (req.input.kind === "recover" && req.store !== false);

/**
 * How a turn is stored: before its answer when the caller is answered early, step by step
 * when it is durable, and at its end with the thread and the gate it leaves. A store that
 * fails is the service's trouble (`Unavailable`), never the turn's.
 */
export class TurnRecords {
  constructor(private readonly db: Db) {}

  /**
   * Stores a turn whose caller is answered before it ends (`acknowledgedEarly`), before that
   * answer: its thread, its input, and its response as a kill would leave it (failed,
   * `shutdown`). Whatever happens next, the caller finds the turn, not a 404.
   */
  async acknowledge(req: TurnRequest, turn: TurnHandle, progress: StoredProgress): Promise<void> {
    const { context } = progress;
    const stopped = { status: "failed" as const, error: { ...STOPPED }, usage: noUsage(), tools: req.externalTools ?? progress.tools ?? [] };
    await acknowledgeTurn(this.db, {
      ...turnRows(req, turn, progress, stopped),
      items: turn.input.map((item, i) => ({ seq: context.nextSeq + i, item, input: true })),
      answersGate: inputItems(req.input).toolOutputs.length > 0,
    });
    context.stored(turn.input.length);
    progress.stored = turn.input.length;
  }

  /** What a durable turn has produced since it last stored: stored now, before a tool runs or once it has. */
  async checkpoint(turn: TurnHandle, progress: StoredProgress, produced: ConversationItem[]): Promise<void> {
    const from = progress.stored;
    const fresh = produced.slice(from);
    if (!fresh.length) return;
    try {
      await storeTurnItems(this.db, {
        threadId: turn.threadId,
        responseId: turn.id,
        createdAt: turn.createdAt,
        items: fresh.map((item, i) => ({ seq: progress.context.nextSeq + i, item, input: from + i < turn.input.length })),
      });
    } catch (e) {
      throw new Unavailable(`The database could not store the turn's progress: ${storeUnavailable(e) ?? (e as Error).message.slice(0, 200)}`);
    }
    progress.context.stored(fresh.length);
    progress.stored += fresh.length;
  }

  /** The turn, its thread and the gate it leaves, in one transaction with the channel's own writes. */
  async commit(req: TurnRequest, turn: TurnHandle, progress: StoredProgress, result: TurnResult, ran: Ran): Promise<void> {
    // what is stored already: an acknowledged turn's input, a durable turn's checkpoints
    const from = progress.stored;
    try {
      await commitTurn(this.db, {
        ...turnRows(req, turn, progress, result),
        acknowledged: acknowledgedEarly(req) || req.input.kind === "recover",
        items: ran.produced.slice(from).map((item, i) => ({ seq: progress.context.nextSeq + i, item, input: from + i < turn.input.length })),
        gate: ran.gate,
      });
    } catch (e) {
      // drizzle's own message quotes the statement and every value: the turn's content
      const cause = ((e as Error).cause ?? e) as Error;
      throw new Unavailable(`The database could not store the turn: ${storeUnavailable(e) ?? String(cause?.message ?? cause).slice(0, 200)}`);
    }
  }
}

/** The thread and response rows of a turn with this outcome. */
function turnRows(req: TurnRequest, turn: TurnHandle, progress: StoredProgress, outcome: Pick<TurnResult, "status" | "error" | "usage" | "tools">): Pick<TurnRecord, "thread" | "response"> {
  return {
    thread: { id: turn.threadId, userId: req.userId, isNew: progress.isNew, tools: outcome.tools.length ? outcome.tools : null, title: progress.isNew ? titleOf(req) : undefined, channel: req.channel },
    response: {
      id: turn.id,
      status: outcome.status,
      model: req.model,
      error: outcome.error,
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      cachedTokens: outcome.usage.cachedTokens,
      reasoningTokens: outcome.usage.reasoningTokens,
      costMicroUsd: microUsd(outcome.usage.costUsd),
      meta: req.meta ?? null,
      createdAt: turn.createdAt,
      jobId: req.origin?.jobId ?? null,
    },
  };
}

/** The thread's title, from the turn's last user message. */
function titleOf(req: TurnRequest): string | undefined {
  const last = inputItems(req.input).messages.findLast((m) => "role" in m && m.role === "user");
  return threadTitle(last && "role" in last ? last.content : undefined);
}
