/**
 * The interface between the host and an extension's WebAssembly module.
 *
 * The module imports:
 *   env.memory                                   its only memory, made by the host with the
 *                                                manifest's `limits.memoryPages` as maximum
 *   host.log(ptr: i32, len: i32)                 a UTF-8 line for the service log
 *   host.http_get(ptr: i32, len: i32) -> i64     GET the UTF-8 URL at ptr/len; the host answers
 *                                                with the JSON `{"status":200,"body":"..."}`
 *                                                or `{"error":"..."}`, written with `alloc`
 * and exports:
 *   alloc(len: i32) -> i32                       room for `len` bytes the host writes into
 *   <tool>(ptr: i32, len: i32) -> i64            one function per tool of the manifest, named
 *                                                like it: arguments JSON in, result text out
 *
 * An i64 result packs a pointer and a length: `(ptr << 32) | len`. A trap fails the call.
 * Nothing else is imported: no WASI, no file system, no clock; the host makes every request.
 */
export const ALLOC_EXPORT = "alloc";
const ALLOWED_IMPORTS: Record<string, string> = {
  "env.memory": "memory",
  "host.log": "function",
  "host.http_get": "function",
};

/** 64 KiB, the unit of WebAssembly memory. */
export const PAGE_BYTES = 65_536;
/** A call's memory: 256 MiB unless the manifest says otherwise, never more than 1 GiB. */
export const DEFAULT_MEMORY_PAGES = 4_096;
export const MAX_MEMORY_PAGES = 16_384;
/** A call's CPU time: 5 s unless the manifest says otherwise, never more than 60 s. */
export const DEFAULT_CPU_MS = 5_000;
export const MAX_CPU_MS = 60_000;
/** A call's wall time, HTTP requests included. */
export const DEFAULT_TIMEOUT_MS = 10_000;

export class ModuleError extends Error {
  override name = "ModuleError";
}

export const pack = (ptr: number, len: number): bigint => (BigInt(ptr >>> 0) << 32n) | BigInt(len >>> 0);
export const unpack = (v: bigint): { ptr: number; len: number } => ({
  ptr: Number((BigInt.asUintN(64, v) >> 32n) & 0xffffffffn),
  len: Number(BigInt.asUintN(64, v) & 0xffffffffn),
});

/** The memory the host makes for the module: what its import needs, within the limit. */
export interface ModuleShape {
  minPages: number;
  /** The limit, or less when the module itself declares a smaller maximum. */
  maxPages: number;
}

/**
 * Checks a module against the interface before it is ever run: it compiles, imports only
 * what the host gives, takes its memory from the host (so the limit holds), and exports
 * `alloc` and a function for each tool.
 */
export function inspectModule(bytes: Uint8Array, tools: string[], memoryPages: number): ModuleShape {
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  } catch (e) {
    throw new ModuleError(`not a valid WebAssembly module: ${(e as Error).message}`);
  }
  for (const imp of WebAssembly.Module.imports(module)) {
    const key = `${imp.module}.${imp.name}`;
    if (ALLOWED_IMPORTS[key] !== imp.kind) {
      throw new ModuleError(`imports ${key} (${imp.kind}); the host offers only env.memory, host.log and host.http_get`);
    }
  }
  const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  for (const name of [ALLOC_EXPORT, ...tools]) {
    if (exports.get(name) !== "function") throw new ModuleError(`does not export the function ${name}`);
  }
  const layout = memoryLayout(bytes);
  if (layout.defined) throw new ModuleError("defines its own memory; it must import env.memory so that the host can limit it");
  if (!layout.imported) throw new ModuleError("does not import env.memory");
  if (layout.imported.shared || layout.imported.memory64) throw new ModuleError("asks for a shared or 64-bit memory, which the host does not give");
  if (layout.imported.min > memoryPages) {
    throw new ModuleError(`needs ${layout.imported.min} pages of memory to start, more than its limit of ${memoryPages}`);
  }
  const declared = layout.imported.max;
  return { minPages: layout.imported.min, maxPages: declared === undefined ? memoryPages : Math.min(declared, memoryPages) };
}

interface Limits {
  min: number;
  max?: number;
  shared: boolean;
  memory64: boolean;
}

/** Reads the import and memory sections of a (valid) module binary. */
function memoryLayout(bytes: Uint8Array): { imported?: Limits; defined: boolean } {
  let at = 8; // magic and version
  const byte = () => bytes[at++]!;
  const leb = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = byte();
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
      shift += 7;
    }
  };
  const skipName = () => {
    const n = leb();
    const s = new TextDecoder().decode(bytes.subarray(at, at + n));
    at += n;
    return s;
  };
  const limits = (): Limits => {
    const flags = byte();
    const min = leb();
    const max = flags & 1 ? leb() : undefined;
    return { min, max, shared: (flags & 2) !== 0, memory64: (flags & 4) !== 0 };
  };
  let imported: Limits | undefined;
  let defined = false;
  while (at < bytes.length) {
    const id = byte();
    const size = leb();
    const end = at + size;
    if (id === 2) {
      const count = leb();
      for (let i = 0; i < count; i++) {
        const mod = skipName();
        const name = skipName();
        const kind = byte();
        if (kind === 0) leb(); // function: type index
        else if (kind === 1) (byte(), limits()); // table: reference type, limits
        else if (kind === 2) {
          const l = limits();
          if (mod === "env" && name === "memory") imported = l;
        } else if (kind === 3) (byte(), byte()); // global: value type, mutability
        else break; // a kind this reader does not know (tags): compile already vetted the imports
      }
    } else if (id === 5) {
      defined = leb() > 0;
    }
    at = end;
  }
  return { imported, defined };
}
