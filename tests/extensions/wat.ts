// The test extension's WebAssembly module, written in WAT and compiled at test time with wabt.
import wabtInit from "wabt";

const wabt = await wabtInit();

/** Compiles WAT text to a module binary. */
export function wat2wasm(source: string): Uint8Array {
  const parsed = wabt.parseWat("extension.wat", source);
  try {
    parsed.resolveNames();
    parsed.validate();
    return parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}

const escapeBytes = (s: string) => [...new TextEncoder().encode(s)].map((b) => `\\${b.toString(16).padStart(2, "0")}`).join("");

/**
 * A module that follows the service's ABI (src/extensions/wasm/abi.ts): a bump `alloc`, and
 * the tools
 *   echo          logs its arguments and returns them
 *   fetch_<name>  GETs the URL `urls[name]` (fixed at compile time) and returns the host's reply
 *   spin          never returns
 *   grow          tries to grow memory by `growPages` pages: "grew" or "refused"
 */
export function testModuleWat(opts: { urls?: Record<string, string>; growPages?: number; memoryMin?: number } = {}): string {
  const data: string[] = [];
  const funcs: string[] = [];
  let offset = 16;
  const place = (text: string) => {
    const at = offset;
    const len = new TextEncoder().encode(text).length;
    data.push(`(data (i32.const ${at}) "${escapeBytes(text)}")`);
    offset += len + 8;
    return { at, len };
  };
  for (const [name, url] of Object.entries(opts.urls ?? {})) {
    const s = place(url);
    funcs.push(`(func (export "fetch_${name}") (param i32 i32) (result i64) (call $http_get (i32.const ${s.at}) (i32.const ${s.len})))`);
  }
  const grew = place("grew");
  const refused = place("refused");
  return `(module
  (import "env" "memory" (memory ${opts.memoryMin ?? 1}))
  (import "host" "log" (func $log (param i32 i32)))
  (import "host" "http_get" (func $http_get (param i32 i32) (result i64)))
  (global $heap (mut i32) (i32.const 8192))
  ${data.join("\n  ")}
  (func $pack (param $p i32) (param $l i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $l))))
  (func (export "alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get $n)) (i32.const 7)) (i32.const -8)))
    (block $ok
      (br_if $ok (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
      (drop (memory.grow (i32.add (i32.div_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)) (i32.const 1)))))
    (local.get $p))
  (func (export "echo") (param $p i32) (param $l i32) (result i64)
    (call $log (local.get $p) (local.get $l))
    (call $pack (local.get $p) (local.get $l)))
  (func (export "spin") (param i32 i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0))
  (func (export "grow") (param i32 i32) (result i64)
    (if (result i64) (i32.lt_s (memory.grow (i32.const ${opts.growPages ?? 64})) (i32.const 0))
      (then (call $pack (i32.const ${refused.at}) (i32.const ${refused.len})))
      (else (call $pack (i32.const ${grew.at}) (i32.const ${grew.len})))))
  ${funcs.join("\n  ")}
)`;
}
