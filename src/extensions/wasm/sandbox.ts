// The sandbox process: runs one call of an extension's WebAssembly tool and exits.
//
// It is a child process, not a Worker, because Bun cannot stop a Worker spinning in a pure
// WebAssembly loop (worker.terminate() never returns); a process can always be killed. It
// gets no environment and no credentials: the module's only way out is `host.http_get`,
// which this process forwards to the service over stdout and answers from stdin (one JSON
// line each way), so the service checks the allowlist and adds credentials itself.
import { readFileSync, readSync, writeSync } from "node:fs";
import { ALLOC_EXPORT, pack, unpack } from "./abi";

/** The call the service asks for: the first line on stdin. */
export interface SandboxJob {
  module: string;
  tool: string;
  /** The arguments JSON given to the tool. */
  input: string;
  minPages: number;
  maxPages: number;
}

/** What the sandbox writes on stdout, one JSON line each. */
export type SandboxMessage =
  | { t: "log"; message: string }
  | { t: "http_get"; url: string }
  | { t: "done"; output: string }
  | { t: "error"; message: string };

const MAX_LOG_CHARS = 2_000;
const MAX_LOGS = 100;

/** Blocking line I/O on the process's stdin and stdout. */
class LineIO {
  #pending = Buffer.alloc(0);
  readonly #chunk = Buffer.alloc(64 * 1024);

  readLine(): string {
    for (;;) {
      const nl = this.#pending.indexOf(10);
      if (nl >= 0) {
        const line = this.#pending.subarray(0, nl).toString("utf8");
        this.#pending = this.#pending.subarray(nl + 1);
        return line;
      }
      let n: number;
      try {
        n = readSync(0, this.#chunk, 0, this.#chunk.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
          continue;
        }
        throw e;
      }
      if (n === 0) throw new Error("the service closed the sandbox's input");
      this.#pending = Buffer.concat([this.#pending, this.#chunk.subarray(0, n)]);
    }
  }

  send(message: SandboxMessage): void {
    const bytes = Buffer.from(JSON.stringify(message) + "\n", "utf8");
    for (let off = 0; off < bytes.length; ) {
      try {
        off += writeSync(1, bytes, off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }
    }
  }
}

/** `service __wasm-sandbox`: the compiled binary's way in. */
export async function sandboxMain(): Promise<number> {
  runSandbox();
  return Number(process.exitCode ?? 0);
}

export function runSandbox(): void {
  const io = new LineIO();
  let job: SandboxJob;
  try {
    job = JSON.parse(io.readLine()) as SandboxJob;
  } catch (e) {
    process.stderr.write(`sandbox: no job on stdin: ${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  try {
    io.send({ t: "done", output: call(job, io) });
  } catch (e) {
    io.send({ t: "error", message: describe(e) });
  }
}

function call(job: SandboxJob, io: LineIO): string {
  const module = new WebAssembly.Module(readFileSync(job.module));
  const memory = new WebAssembly.Memory({ initial: job.minPages, maximum: job.maxPages });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let alloc: (len: number) => number = () => {
    throw new Error("the module called the host before it was ready");
  };
  let logs = 0;

  const read = (ptr: number, len: number, what: string): string => {
    ptr >>>= 0;
    len >>>= 0;
    if (ptr + len > memory.buffer.byteLength) throw new Error(`${what} lies outside the module's memory`);
    return decoder.decode(new Uint8Array(memory.buffer, ptr, len));
  };
  const write = (text: string): { ptr: number; len: number } => {
    const bytes = encoder.encode(text);
    const ptr = alloc(bytes.length) >>> 0;
    if (ptr + bytes.length > memory.buffer.byteLength) throw new Error("alloc returned room outside the module's memory");
    new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
    return { ptr, len: bytes.length };
  };

  const host = {
    log(ptr: number, len: number): void {
      if (++logs > MAX_LOGS) return;
      io.send({ t: "log", message: read(ptr, len, "the log line").slice(0, MAX_LOG_CHARS) });
    },
    http_get(ptr: number, len: number): bigint {
      io.send({ t: "http_get", url: read(ptr, len, "the URL") });
      const reply = io.readLine();
      const { ptr: p, len: l } = write(reply);
      return pack(p, l);
    },
  };
  const instance = new WebAssembly.Instance(module, { env: { memory }, host });
  const exports = instance.exports as Record<string, unknown>;
  const allocFn = exports[ALLOC_EXPORT];
  const toolFn = exports[job.tool];
  if (typeof allocFn !== "function") throw new Error(`the module does not export ${ALLOC_EXPORT}`);
  if (typeof toolFn !== "function") throw new Error(`the module does not export the tool ${job.tool}`);
  alloc = (n) => Number((allocFn as (n: number) => number)(n));

  const input = write(job.input);
  const result = (toolFn as (ptr: number, len: number) => bigint)(input.ptr, input.len);
  if (typeof result !== "bigint") throw new Error(`${job.tool} must return an i64 (pointer << 32 | length)`);
  const out = unpack(result);
  return read(out.ptr, out.len, "the result");
}

function describe(e: unknown): string {
  if (e instanceof WebAssembly.RuntimeError) return `the module trapped: ${e.message}`;
  if (e instanceof RangeError && /memory|grow/i.test(e.message)) return `out of memory: ${e.message}`;
  if (e instanceof WebAssembly.LinkError) return `the module could not be linked: ${e.message}`;
  return (e as Error)?.message ?? String(e);
}
