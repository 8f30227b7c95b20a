import { hashToken, sameSecret } from "../tokens";
import type { FlowChecks } from "./provider";

/** A sign-in between its start and its callback. */
interface Pending extends FlowChecks {
  provider: string;
  /** Hash of the browser's binding cookie: the callback must come from the browser that started. */
  binding: string;
  expiresAt: number;
}

/** How long a person has to sign in at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;
const MAX_PENDING = 1_000;

/**
 * Sign-ins under way, by state, in memory (a restart only means signing in again). A state is
 * good once: taking it removes it, whatever the outcome.
 */
export class PendingSignIns {
  readonly #byState = new Map<string, Pending>();

  add(provider: string, checks: FlowChecks, binding: string, now = Date.now()): void {
    for (const [state, p] of this.#byState) if (p.expiresAt <= now) this.#byState.delete(state);
    if (this.#byState.size >= MAX_PENDING) this.#byState.delete(this.#byState.keys().next().value!);
    this.#byState.set(checks.state, { ...checks, provider, binding: hashToken(binding), expiresAt: now + PENDING_TTL_MS });
  }

  /** The checks of the sign-in with this state, if it is this provider's, unexpired and this browser's. */
  take(provider: string, state: string, binding: string | undefined, now = Date.now()): FlowChecks | undefined {
    const p = this.#byState.get(state);
    if (!p) return undefined;
    this.#byState.delete(state);
    if (p.provider !== provider || p.expiresAt <= now || !binding || !sameSecret(hashToken(binding), p.binding)) return undefined;
    return { state: p.state, nonce: p.nonce, verifier: p.verifier };
  }
}
