import { dirname, join } from "node:path";
import { PAGE_BYTES } from "./abi";
import { sandboxedGet, type NetworkPolicy } from "./network";
import type { SandboxJob, SandboxMessage } from "./sandbox";
import { watchUsage } from "./usage";

/** The most output (and log) a call may write before it is stopped. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;
const STDERR_TAIL_CHARS = 1_000;
/**
 * What the sandbox process may hold besides the module's memory: the runtime itself (about
 * 50 MiB), compiled code, tables and the replies it passes on. Past that it is stopped.
 */
export const RUNTIME_ALLOWANCE_BYTES = 128 * 1024 * 1024;

export interface WasmCall {
  module: string;
  tool: string;
  args: unknown;
  minPages: number;
  maxPages: number;
  /** Wall time of the call. */
  timeoutMs: number;
  /** CPU time of the sandbox process, all its threads. */
  cpuMs: number;
  /** Where the module's requests may go, and the credential they carry there. */
  network: NetworkPolicy;
  signal: AbortSignal;
  log: (message: string) => void;
}

const compiled = import.meta.path.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(import.meta.path);

/** How to start the sandbox process: the binary itself, or Bun on the source entry. */
function sandboxCommand(): { cmd: string[]; cwd: string } {
  if (compiled) return { cmd: [process.execPath, "__wasm-sandbox"], cwd: dirname(process.execPath) };
  return { cmd: [process.execPath, join(import.meta.dir, "sandbox-main.ts")], cwd: import.meta.dir };
}

/**
 * Runs one call of a WebAssembly tool in a fresh sandbox process and returns its result
 * text. The process is killed when the call passes its wall time or CPU time limit, when it
 * holds more memory than the module's limit and the runtime's allowance, or when the turn is
 * cancelled.
 */
export async function runWasmTool(c: WasmCall): Promise<string> {
  const { cmd, cwd } = sandboxCommand();
  // no environment: nothing of the service's (keys, tokens) is there to leak
  const proc = Bun.spawn(cmd, { cwd, env: {}, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const deadline = new AbortController();
  let stopped: Error | undefined;
  const stop = (why: Error) => {
    stopped ??= why;
    deadline.abort(why);
    proc.kill("SIGKILL");
  };
  const timer = setTimeout(() => stop(new Error(`did not finish within ${c.timeoutMs} ms and was stopped`)), c.timeoutMs);
  const memoryBytes = c.maxPages * PAGE_BYTES;
  const unwatch = watchUsage(proc.pid, { cpuMs: c.cpuMs, rssBytes: memoryBytes + RUNTIME_ALLOWANCE_BYTES }, (what) =>
    stop(
      new Error(
        what === "cpu"
          ? `used its ${c.cpuMs / 1000} s of CPU time and was stopped`
          : `used more memory than its limit (${memoryBytes / 1024 / 1024} MiB for the module and ${RUNTIME_ALLOWANCE_BYTES / 1024 / 1024} MiB for the runtime) and was stopped`,
      ),
    ),
  );
  const onAbort = () => stop(c.signal.reason instanceof Error ? c.signal.reason : new Error("the call was cancelled"));
  if (c.signal.aborted) onAbort();
  c.signal.addEventListener("abort", onAbort, { once: true });
  const stderr = new Response(proc.stderr).text().catch(() => "");

  const send = (line: string) => {
    proc.stdin.write(line + "\n");
    proc.stdin.flush();
  };
  const job: SandboxJob = {
    module: c.module,
    tool: c.tool,
    input: JSON.stringify(c.args ?? {}),
    minPages: c.minPages,
    maxPages: c.maxPages,
  };
  try {
    send(JSON.stringify(job));
    for await (const line of lines(proc.stdout)) {
      let msg: SandboxMessage;
      try {
        msg = JSON.parse(line) as SandboxMessage;
      } catch {
        throw new Error("the sandbox wrote something that is not its protocol");
      }
      if (msg.t === "log") c.log(msg.message);
      else if (msg.t === "http_get") send(JSON.stringify(await sandboxedGet(msg.url, c.network, deadline.signal)));
      else if (msg.t === "done") return msg.output;
      else if (msg.t === "error") throw new Error(msg.message);
    }
    if (stopped) throw stopped;
    const code = await proc.exited;
    const tail = (await stderr).trim().slice(-STDERR_TAIL_CHARS);
    throw new Error(`the sandbox exited (code ${code}) without a result${tail ? `: ${tail}` : ""}`);
  } catch (e) {
    throw stopped ?? e;
  } finally {
    clearTimeout(timer);
    unwatch();
    c.signal.removeEventListener("abort", onAbort);
    proc.kill("SIGKILL");
    proc.stdin.end();
  }
}

/** The lines of a byte stream; a line longer than MAX_LINE_BYTES is an error. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
    }
    if (buffered.length > MAX_LINE_BYTES) throw new Error(`the module's output is larger than ${MAX_LINE_BYTES / 1024 / 1024} MiB`);
  }
}
