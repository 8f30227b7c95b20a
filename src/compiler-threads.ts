import { readdirSync, readFileSync } from "node:fs";
import { libc } from "./libc";

/**
 * JavaScriptCore compiles the service's hot functions on threads of its own (`JITWorker`, two
 * here, started with the process) while the event loop runs on. For the first few thousand
 * turns a compile runs every few dozen turns, and on a machine with few cores it takes a core
 * from what the turn in flight waits on: the model server, the caller, the event loop itself.
 * A turn with a compile in it took over 2 ms in 0.4–0.6 % of sequential turns, the largest
 * part of the p99 (`bun run bench:tail`, docs/performance.md). At `SCHED_IDLE` Linux runs those
 * threads only on a core that has nothing else to do, and sets them aside the moment anything
 * else wants it: the compiles still happen, in the gaps. (A nice value of 19 was not enough:
 * such a thread still keeps the core for its time slice.)
 *
 * Linux only; anywhere else, without FFI, or with `SERVICE_JIT_PRIORITY=normal`, it does
 * nothing. Returns how many threads it set.
 */
export function idleCompilerThreads(env: NodeJS.ProcessEnv = process.env): number {
  if (process.platform !== "linux" || env.SERVICE_JIT_PRIORITY === "normal") return 0;
  try {
    const compilers = readdirSync("/proc/self/task").filter((tid) => nameOf(tid) === "JITWorker");
    if (!compilers.length) return 0;
    const setScheduler = libcSetScheduler();
    return compilers.filter((tid) => setScheduler(Number(tid), SCHED_IDLE) === 0).length;
  } catch {
    return 0;
  }
}

const SCHED_IDLE = 5;

/** A thread's name, or nothing once it has ended. */
function nameOf(tid: string): string | undefined {
  try {
    return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

function libcSetScheduler() {
  const { sched_setscheduler } = libc({ sched_setscheduler: { args: ["i32", "i32", "ptr"], returns: "i32" } });
  // struct sched_param { int sched_priority }: 0, as SCHED_IDLE requires
  const param = new Int32Array(1);
  return (tid: number, policy: number) => sched_setscheduler(tid, policy, param);
}
