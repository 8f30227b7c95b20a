import { BUN_MAX_HTTP_REQUESTS } from "../llm/stream-slots";

/**
 * Bun and JavaScriptCore read some options from the environment only when the process
 * starts, so `serve` re-executes itself once with them set: same PID, same stdio and
 * terminal. An option the operator set is left as it is.
 *
 * - `BUN_JSC_useFTLJIT=false`: no top JIT tier (FTL). The service's hot paths wait on I/O,
 *   so FTL buys no measurable throughput, but its compiled code costs about 9 MB of resident
 *   memory (docs/performance.md). `SERVICE_FULL_JIT=1` keeps the full JIT.
 * - `BUN_CONFIG_MAX_HTTP_REQUESTS`: Bun's `fetch` runs at most 256 requests at once and
 *   queues the rest silently, LLM streams included. Raised to Bun's maximum, so that the
 *   service's own limit (`llm.maxConcurrent`, src/llm/stream-slots.ts) is the one that holds.
 */
export function relaunchWithRuntimeOptions(env: NodeJS.ProcessEnv = process.env): void {
  const options: Record<string, string> = {};
  if (env.BUN_JSC_useFTLJIT === undefined && !env.SERVICE_FULL_JIT) options.BUN_JSC_useFTLJIT = "false";
  if (env.BUN_CONFIG_MAX_HTTP_REQUESTS === undefined) options.BUN_CONFIG_MAX_HTTP_REQUESTS = String(BUN_MAX_HTTP_REQUESTS);
  if (!Object.keys(options).length) return;
  // In a compiled binary Bun shows argv as ["bun", "/$bunfs/root/<name>", ...args].
  const compiled = process.argv[1]?.startsWith("/$bunfs/") ?? false;
  const argv = [process.execPath, ...process.argv.slice(compiled ? 2 : 1)];
  try {
    process.execve?.(process.execPath, argv, { ...env, ...options });
  } catch {
    // no execve here: run as started
  }
}
