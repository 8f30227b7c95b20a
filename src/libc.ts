import type { FFIFunction } from "bun:ffi";

/**
 * Functions of the C library (glibc's `libc.so.6`), through `bun:ffi`, loaded when first asked
 * for. Throws where there is no such library or no FFI: callers do without.
 */
export function libc<const Fns extends Record<string, FFIFunction>>(fns: Fns) {
  const { dlopen } = require("bun:ffi") as typeof import("bun:ffi");
  return dlopen("libc.so.6", fns).symbols;
}
