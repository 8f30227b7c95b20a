import { TurnError } from "../errors";
import type { Logger } from "../log";
import type { Db } from "../store/db";
import { getUser } from "../store/users";
import { localDay, spent } from "../store/usage";
import type { UsageLedger } from "./ledger";

/** One budget that applies to a user, with what has been spent against it. */
export interface BudgetStatus {
  scope: "user" | "instance";
  period: "day" | "month";
  limitUsd: number;
  spentUsd: number;
}

/** The share of a budget at which a warning is logged and shown. */
export const WARN_AT = 0.8;

const usd = (micro: number) => micro / 1e6;
const money = (x: number) => `$${x.toFixed(2)}`;
const WHOSE = { user: "your", instance: "the instance's" } as const;
const PERIOD = { day: "daily", month: "monthly" } as const;

/**
 * Spending limits: the instance's monthly budget (`budgets.monthlyUsd`) and each user's daily
 * and monthly ones (set by admins). Days and months are local to the service's machine. A
 * user's limits are read once and kept until `forget` (an admin changed them).
 */
export class Budgets {
  readonly #limits = new Map<string, { day: number | null; month: number | null }>();

  constructor(private readonly deps: { db: Db; ledger?: UsageLedger; instanceMonthlyUsd?: number; log?: Logger }) {}

  forget(userId: string): void {
    this.#limits.delete(userId);
  }

  /** The budgets that apply to the user now, with what was spent against each. */
  async status(userId: string, now = Date.now()): Promise<BudgetStatus[]> {
    const limits = await this.#userLimits(userId);
    await this.deps.ledger?.flush();
    const day = localDay(now);
    const out: BudgetStatus[] = [];
    if (limits.day !== null || limits.month !== null) {
      const mine = await spent(this.deps.db, day, userId);
      if (limits.day !== null) out.push({ scope: "user", period: "day", limitUsd: usd(limits.day), spentUsd: usd(mine.day) });
      if (limits.month !== null) out.push({ scope: "user", period: "month", limitUsd: usd(limits.month), spentUsd: usd(mine.month) });
    }
    const instance = this.deps.instanceMonthlyUsd;
    if (instance !== undefined) out.push({ scope: "instance", period: "month", limitUsd: instance, spentUsd: usd((await spent(this.deps.db, day)).month) });
    return out;
  }

  /** Throws `budget_exceeded` when a budget of the user's is spent: the turn fails before it asks the model anything. */
  async check(userId: string): Promise<void> {
    if (!this.#mayApply(userId)) return;
    const over = (await this.status(userId)).find((b) => b.spentUsd >= b.limitUsd);
    if (over) {
      const when = over.period === "day" ? "tomorrow" : "next month";
      throw new TurnError(
        "budget_exceeded",
        `${capital(WHOSE[over.scope])} ${PERIOD[over.period]} budget of ${money(over.limitUsd)} is spent (${money(over.spentUsd)}); turns start again ${when}, or when an admin raises it.`,
      );
    }
  }

  /** After a turn that cost `costUsd` was stored: the warning when it took a budget past 80 %, else undefined. */
  async recorded(userId: string, costUsd: number): Promise<string | undefined> {
    if (costUsd <= 0 || !this.#mayApply(userId)) return undefined;
    const crossed = (await this.status(userId)).find((b) => b.spentUsd >= b.limitUsd * WARN_AT && b.spentUsd - costUsd < b.limitUsd * WARN_AT);
    if (!crossed) return undefined;
    const share = Math.floor((crossed.spentUsd / crossed.limitUsd) * 100);
    const message = `${capital(WHOSE[crossed.scope])} ${PERIOD[crossed.period]} budget is ${share} % spent (${money(crossed.spentUsd)} of ${money(crossed.limitUsd)}).`;
    this.deps.log?.warn("budget", { user_id: userId, scope: crossed.scope, period: crossed.period, spent_usd: crossed.spentUsd, limit_usd: crossed.limitUsd, message });
    return message;
  }

  /**
   * Whether a budget may apply, without asking the store: an instance budget, a user whose
   * limits are not known yet, or one that has some. Turns of users without budgets pay nothing.
   */
  #mayApply(userId: string): boolean {
    if (this.deps.instanceMonthlyUsd !== undefined) return true;
    const known = this.#limits.get(userId);
    return !known || known.day !== null || known.month !== null;
  }

  async #userLimits(userId: string): Promise<{ day: number | null; month: number | null }> {
    let limits = this.#limits.get(userId);
    if (!limits) {
      const u = await getUser(this.deps.db, userId);
      limits = { day: u?.budgetDailyMicroUsd ?? null, month: u?.budgetMonthlyMicroUsd ?? null };
      this.#limits.set(userId, limits);
    }
    return limits;
  }
}

const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);
