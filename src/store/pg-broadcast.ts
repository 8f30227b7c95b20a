import type { Sql } from "postgres";
import type { Broadcast } from "./broadcast";

const CHANNEL = "service_events";
/**
 * NOTIFY's payload is at most 8000 bytes: a longer message goes in parts, in one transaction.
 * (Characters, not bytes: at most 3 bytes each, twice as many once escaped in a part.)
 */
const WHOLE_CHARS = 2500;
const PART_CHARS = 1000;

type Envelope = { o: string; t: string; s: number } & ({ m: unknown } | { i: number; n: number; d: string });

/**
 * The broadcast over LISTEN/NOTIFY. Messages are sent one batch at a time, in order (a batch
 * is one transaction: NOTIFY delivers at commit, in order); the listening connection is
 * postgres.js's own, which listens again after a reconnect.
 */
export class PgBroadcast implements Broadcast {
  readonly #origin = crypto.randomUUID();
  readonly #topics = new Map<string, Set<(m: unknown) => void>>();
  readonly #parts = new Map<string, string[]>();
  #outbox: string[] = [];
  #sending: Promise<void> | undefined;
  #seq = 0;
  #unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly onError: (e: Error) => void,
  ) {}

  async start(): Promise<void> {
    const { unlisten } = await this.sql.listen(CHANNEL, (payload) => this.#heard(payload));
    this.#unlisten = unlisten;
  }

  async stop(): Promise<void> {
    await this.#sending;
    await this.#unlisten?.().catch(() => {});
  }

  publish(topic: string, message: unknown): void {
    const whole = JSON.stringify({ o: this.#origin, t: topic, s: ++this.#seq, m: message } satisfies Envelope);
    if (whole.length <= WHOLE_CHARS) this.#outbox.push(whole);
    else {
      const data = JSON.stringify(message);
      const s = this.#seq;
      const n = Math.ceil(data.length / PART_CHARS);
      for (let i = 0; i < n; i++) this.#outbox.push(JSON.stringify({ o: this.#origin, t: topic, s, i, n, d: data.slice(i * PART_CHARS, (i + 1) * PART_CHARS) } satisfies Envelope));
    }
    this.#sending ??= this.#send();
  }

  subscribe(topic: string, fn: (message: unknown) => void): () => void {
    let set = this.#topics.get(topic);
    if (!set) this.#topics.set(topic, (set = new Set()));
    set.add(fn);
    return () => void set.delete(fn);
  }

  async #send(): Promise<void> {
    while (this.#outbox.length) {
      const batch = this.#outbox;
      this.#outbox = [];
      try {
        if (batch.length === 1) await this.sql`select pg_notify(${CHANNEL}, ${batch[0]!})`;
        else await this.sql.begin((tx) => batch.map((p) => tx`select pg_notify(${CHANNEL}, ${p})`));
      } catch (e) {
        this.onError(e as Error);
      }
    }
    this.#sending = undefined;
  }

  #heard(payload: string): void {
    let e: Envelope;
    try {
      e = JSON.parse(payload);
    } catch {
      return;
    }
    if (e.o === this.#origin) return;
    let message: unknown;
    if ("m" in e) message = e.m;
    else {
      const key = `${e.o} ${e.s}`;
      const parts = this.#parts.get(key) ?? [];
      parts[e.i] = e.d;
      if (parts.filter((p) => p !== undefined).length < e.n) return void this.#parts.set(key, parts);
      this.#parts.delete(key);
      message = JSON.parse(parts.join(""));
    }
    for (const fn of this.#topics.get(e.t) ?? []) {
      try {
        fn(message);
      } catch (err) {
        this.onError(err as Error);
      }
    }
  }
}
