// Webhook callbacks: when a job that named a `callback_url` ends, its record is POSTed there,
// signed with the webhook secret, and retried with backoff until a 2xx answer or the last
// attempt. The state lives in the job's row, so deliveries survive a restart.
import { BlockList, isIP } from "node:net";
import { ConfigError } from "../../errors";
import type { Logger } from "../../log";
import type { Db } from "../../store/db";
import { getJob, pendingCallbacks, setCallbackState, type JobRow } from "../../store/jobs";
import { jobRecord } from "./record";
import { hubSignature, standardHeaders } from "./signatures";

/** Pauses between attempts: 6 attempts over 8 minutes. */
export const CALLBACK_DELAYS_MS = [5_000, 15_000, 45_000, 120_000, 300_000];
/** Tries of a `waiting` callback (not kept across a restart: the end's callback is). */
const WAITING_ATTEMPTS = 3;
const ATTEMPT_TIMEOUT_MS = 10_000;

/** One entry of the allow list: the hosts it names, and its port (any when it names none). */
interface Destination {
  port: number | undefined;
  host: (host: string, family: number) => boolean;
}

/**
 * The destinations HTTP_CALLBACK_ALLOW_HOSTS allows: host names (`*.` for subdomains), IPs
 * and CIDRs, each with an optional port (`hooks.lan:8080`, `[fd00::1]:8080`, `10.0.0.0/8:443`);
 * an entry without a port allows every port of its hosts.
 */
export class CallbackAllowList {
  readonly #destinations: Destination[] = [];

  constructor(entries: string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (!entry) continue;
      const [, bracketed, bare, port] = /^(?:\[([^\]]*)\]|([^:]*))(?::(\d+))?$/.exec(entry) ?? [undefined, undefined, entry];
      if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535)) {
        throw new ConfigError(`HTTP_CALLBACK_ALLOW_HOSTS: '${raw}' names no port from 1 to 65535`);
      }
      this.#destinations.push({ port: port === undefined ? undefined : Number(port), host: hostMatcher(bracketed ?? bare!, raw) });
    }
  }

  get empty(): boolean {
    return this.#destinations.length === 0;
  }

  /** A host name matches a name entry; an IP address matches an IP or CIDR entry (names are not resolved); the port must be the entry's, if it names one. */
  allows(url: URL): boolean {
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
    const family = isIP(host);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return this.#destinations.some((d) => (d.port === undefined || d.port === port) && d.host(host, family));
  }
}

/** What the host part of an allow-list entry matches: a name, `*.` its subdomains, an address or a CIDR. */
function hostMatcher(host: string, raw: string): Destination["host"] {
  const [address, bits, extra] = host.split("/");
  const family = isIP(address!);
  const type = family === 6 ? "ipv6" : "ipv4";
  if (bits !== undefined) {
    const prefix = Number(bits);
    if (!family || extra !== undefined || !/^\d+$/.test(bits) || prefix > (family === 6 ? 128 : 32)) {
      throw new ConfigError(`HTTP_CALLBACK_ALLOW_HOSTS: '${raw}' is not a CIDR like 10.0.0.0/8`);
    }
    const range = new BlockList();
    range.addSubnet(address!, prefix, type);
    return (h, f) => f !== 0 && range.check(h, f === 6 ? "ipv6" : "ipv4");
  }
  if (family) {
    const one = new BlockList();
    one.addAddress(address!, type);
    return (h, f) => f !== 0 && one.check(h, f === 6 ? "ipv6" : "ipv4");
  }
  if (!host || host.includes(":")) {
    throw new ConfigError(`HTTP_CALLBACK_ALLOW_HOSTS: '${raw}' is not a host name, IP address or CIDR with an optional port (hooks.lan:8080, [fd00::1]:8080)`);
  }
  if (host.startsWith("*.")) return (h, f) => f === 0 && h.endsWith(host.slice(1));
  const name = host.replace(/\.$/, "");
  return (h, f) => f === 0 && h === name;
}

/** Why a callback_url is refused, or undefined when it is fine. */
export function callbackUrlProblem(value: string, allow: CallbackAllowList): string | undefined {
  if (allow.empty) {
    return "callback_url is not accepted: HTTP_CALLBACK_ALLOW_HOSTS lists no destination (set it to the host names, IPs or CIDRs callbacks may go to)";
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "callback_url must be an http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "callback_url must be an http:// or https:// URL";
  if (!allow.allows(url)) return `callback_url: ${url.host} is not in HTTP_CALLBACK_ALLOW_HOSTS`;
  return undefined;
}

export interface CallbackDeps {
  db: Db;
  secret: string;
  allow: CallbackAllowList;
  log: Logger;
  delaysMs?: number[];
  userAgent: string;
}

export class CallbackSender {
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #busy = new Map<string, Promise<void>>();
  readonly #abort = new AbortController();
  readonly #delays: number[];

  constructor(private readonly d: CallbackDeps) {
    this.#delays = d.delaysMs ?? CALLBACK_DELAYS_MS;
  }

  /** Picks up the deliveries a stopped process left pending, each at its due time. */
  async start(): Promise<void> {
    for (const job of await pendingCallbacks(this.d.db)) this.#schedule(job.id, (job.callbackNextAt ?? 0) - Date.now());
  }

  /** A job ended: its callback, if it has one, goes now. */
  jobEnded(job: JobRow): void {
    if (job.callbackStatus === "pending") this.#schedule(job.id, 0);
  }

  /**
   * A job waits on a person: its callback hears it at once (event `waiting`) with what waits
   * and where to decide, once, trying a few times; the job's end is its callback as usual.
   */
  jobWaiting(job: JobRow, approval: { tool: string; arguments: string; url: string; destination?: string }): void {
    if (!job.callbackUrl || this.#abort.signal.aborted) return;
    const url = new URL(job.callbackUrl);
    if (!this.d.allow.allows(url)) return;
    const body = JSON.stringify({ ...jobRecord(job), event: "waiting", approval });
    const fields = { job_id: job.id, event: "waiting" };
    const send = async (attempt: number): Promise<void> => {
      const problem = await this.#post(url, body, job.id, `msg_${job.id}_waiting_${job.responseId ?? ""}`).catch((e) => (e as Error).message);
      if (problem === undefined) return void this.d.log.info("callback delivered", fields);
      if (this.#abort.signal.aborted) return;
      if (attempt >= WAITING_ATTEMPTS) return void this.d.log.warn("callback failed", { ...fields, error: problem });
      await Bun.sleep(this.#delays[attempt - 1] ?? 1_000);
      return send(attempt + 1);
    };
    void send(1);
  }

  /** One POST of a callback body, signed; undefined when the receiver took it (2xx), else why not. */
  async #post(url: URL, body: string, jobId: string, messageId: string): Promise<string | undefined> {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": this.d.userAgent,
        "x-webhook-signature": hubSignature(body, this.d.secret),
        "x-webhook-job-id": jobId,
        ...standardHeaders(messageId, body, this.d.secret),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
    });
    await res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300 ? undefined : `HTTP ${res.status}`;
  }

  /** Stops sending; what is still pending is picked up by the next start. */
  async stop(): Promise<void> {
    this.#abort.abort();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await Promise.allSettled([...this.#busy.values()]);
  }

  #schedule(id: string, inMs: number): void {
    if (this.#abort.signal.aborted) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        if (this.#busy.has(id)) return;
        const run = this.#attempt(id)
          .catch((e) => this.d.log.error("callback", { job_id: id, error: (e as Error).message }))
          .finally(() => this.#busy.delete(id));
        this.#busy.set(id, run);
      },
      Math.max(0, inMs),
    );
    this.#timers.add(timer);
  }

  async #attempt(id: string): Promise<void> {
    const job = await getJob(this.d.db, id);
    if (!job?.callbackUrl || job.callbackStatus !== "pending") return;
    const attempts = job.callbackAttempts + 1;
    const last = attempts > this.#delays.length;
    // the record as it stands, this attempt counted
    const body = JSON.stringify(jobRecord({ ...job, callbackAttempts: attempts }));
    const fields = { job_id: id, attempt: attempts };
    const url = new URL(job.callbackUrl);
    let problem: string;
    if (!this.d.allow.allows(url)) {
      // HTTP_CALLBACK_ALLOW_HOSTS changed since the job was accepted: never sent
      await setCallbackState(this.d.db, id, { status: "failed", attempts: job.callbackAttempts, nextAt: null });
      this.d.log.error("callback refused", { ...fields, error: `the host ${url.hostname} is no longer in HTTP_CALLBACK_ALLOW_HOSTS` });
      return;
    }
    try {
      // Standard Webhooks: one message per end of the job, the same id on every attempt
      const refused = await this.#post(url, body, id, `msg_${id}_${Date.parse(job.completedAt ?? "") || 0}`);
      if (refused === undefined) {
        await setCallbackState(this.d.db, id, { status: "delivered", attempts, nextAt: null });
        this.d.log.info("callback delivered", fields);
        return;
      }
      problem = refused;
    } catch (e) {
      // stopping: this attempt does not count, the next start makes it again
      if (this.#abort.signal.aborted) return;
      problem = (e as Error).message;
    }
    if (last) {
      await setCallbackState(this.d.db, id, { status: "failed", attempts, nextAt: null });
      this.d.log.error("callback failed", { ...fields, error: `${problem}; giving up after ${attempts} attempts` });
      return;
    }
    const delay = this.#delays[attempts - 1]!;
    await setCallbackState(this.d.db, id, { status: "pending", attempts, nextAt: Date.now() + delay });
    this.d.log.warn("callback attempt failed", { ...fields, error: problem, retry_in_ms: delay });
    this.#schedule(id, delay);
  }
}

/** The one line per job: ids, status, duration and, when it failed, the error code. */
export function logJob(log: Logger, j: JobRow): void {
  const error = j.error ?? undefined;
  log[j.status === "failed" ? "warn" : "info"]("job", {
    job_id: j.id,
    source: j.source,
    status: j.status,
    thread_id: j.threadId,
    response_id: j.responseId,
    attempts: j.attempts,
    duration_ms: j.startedAt && j.completedAt ? Date.parse(j.completedAt) - Date.parse(j.startedAt) : null,
    ...(error?.code ? { error_code: error.code } : {}),
  });
}
