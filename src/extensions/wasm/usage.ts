// The CPU time and resident memory of a sandbox process, read from Linux's /proc while it
// runs, so a call is stopped at its CPU limit however long its wall time limit is, and a
// process that grows past its memory (tables, engine allocations) is stopped too.
import { existsSync, readFileSync } from "node:fs";

/** /proc gives CPU times in clock ticks of USER_HZ, which Linux fixes at 100 for user space. */
const TICKS_PER_SECOND = 100;
const POLL_MS = 50;

export interface Usage {
  cpuMs: number;
  rssBytes: number;
}

/** Whether this system shows a process's usage in /proc (Linux); elsewhere only wall time is limited. */
export const usageMeasurable = (): boolean => existsSync("/proc/self/stat");

/** The process's CPU time (user and system, all its threads) and resident memory; undefined once it is gone. */
export function readUsage(pid: number): Usage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the fields after the command name, which is in parentheses and may hold spaces: utime is the 14th field, stime the 15th
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    return { cpuMs: (ticks * 1000) / TICKS_PER_SECOND, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Checks the process every POLL_MS and calls `exceeded` (once) with what it used too much
 * of. Returns the function that stops watching.
 */
export function watchUsage(pid: number, limits: Usage, exceeded: (what: "cpu" | "memory") => void): () => void {
  if (!usageMeasurable()) return () => {};
  const timer = setInterval(() => {
    const used = readUsage(pid);
    const what = !used ? undefined : used.cpuMs > limits.cpuMs ? "cpu" : used.rssBytes > limits.rssBytes ? "memory" : undefined;
    if (!what) return;
    clearInterval(timer);
    exceeded(what);
  }, POLL_MS);
  return () => clearInterval(timer);
}
