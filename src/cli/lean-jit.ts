/**
 * `serve` runs without JavaScriptCore's top JIT tier (FTL). The service's hot paths wait on
 * I/O, so FTL buys no measurable throughput, but its compiled code costs about 9 MB of
 * resident memory (docs/performance.md). JSC reads its options from the environment only
 * when the process starts, so the process re-executes itself once with the option set: same
 * PID, same stdio and terminal. `SERVICE_FULL_JIT=1` keeps the full JIT.
 */
export function relaunchWithLeanJit(env: NodeJS.ProcessEnv = process.env): void {
  if (env.BUN_JSC_useFTLJIT !== undefined || env.SERVICE_FULL_JIT) return;
  // In a compiled binary Bun shows argv as ["bun", "/$bunfs/root/<name>", ...args].
  const compiled = process.argv[1]?.startsWith("/$bunfs/") ?? false;
  const argv = [process.execPath, ...process.argv.slice(compiled ? 2 : 1)];
  try {
    process.execve?.(process.execPath, argv, { ...env, BUN_JSC_useFTLJIT: "false" });
  } catch {
    // no execve here: run with the full JIT
  }
}
