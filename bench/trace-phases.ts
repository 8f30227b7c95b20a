// A turn's phases on the service's own thread, from a text trace of its syscalls
// (/sys/kernel/tracing/trace with the `sys_enter_sendto`, `sys_enter_recvfrom`,
// `sys_enter_epoll_pwait2` and `sys_exit_epoll_pwait2` events): what bench/phases.ts reads.
import { pct } from "./support";

export const PHASES = ["before the model", "the model", "after the answer", "after the response"] as const;
export type Phase = (typeof PHASES)[number];

const FD = /\bfd: 0x([0-9a-f]+)/;
const LEN = /\blen: 0x([0-9a-f]+)/;

/** The phases of each turn in a trace: the model's socket is the one the 9 KB request goes to. */
export function phases(trace: string): Record<Phase, number> {
  const events: { t: number; name: string; enter: boolean; fd?: number; len?: number }[] = [];
  for (const line of trace.split("\n")) {
    const m = /\s(\d+\.\d+): (sys_\w+)(\(| -> )(.*)$/.exec(line);
    if (!m) continue;
    const hex = (field: RegExp) => {
      const v = field.exec(m[4]!)?.[1];
      return v === undefined ? undefined : parseInt(v, 16);
    };
    events.push({ t: Number(m[1]) * 1e6, name: m[2]!, enter: m[3] === "(", fd: hex(FD), len: hex(LEN) });
  }
  const model = new Set(events.filter((e) => e.name === "sys_sendto" && (e.len ?? 0) > 4096).map((e) => e.fd));
  const got: Record<Phase, number[]> = { "before the model": [], "the model": [], "after the answer": [], "after the response": [] };
  let woken = 0;
  let request: number | undefined;
  let asked: number | undefined;
  let answered: number | undefined;
  let responded: number | undefined;
  for (const e of events) {
    if (e.name === "sys_epoll_pwait2" && !e.enter) woken = e.t;
    else if (e.name === "sys_recvfrom") {
      if (!model.has(e.fd)) request ??= woken;
      else if (asked !== undefined && answered === undefined) (answered = woken), got["the model"].push(woken - asked);
    } else if (e.name === "sys_sendto") {
      if (model.has(e.fd) && (e.len ?? 0) > 4096) {
        if (request !== undefined) got["before the model"].push(e.t - request);
        asked = e.t;
      } else if (!model.has(e.fd) && answered !== undefined) {
        got["after the answer"].push(e.t - answered);
        responded = e.t;
        request = asked = answered = undefined;
      }
    } else if (e.name === "sys_epoll_pwait2" && e.enter && responded !== undefined) {
      got["after the response"].push(e.t - responded);
      responded = undefined;
    }
  }
  return Object.fromEntries(PHASES.map((p) => [p, got[p].length ? pct(got[p], 50) : NaN])) as Record<Phase, number>;
}
