import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { format } from "node:util";

/** Where the service and the TUI write their log while the TUI owns the terminal. */
export const logFilePath = (home: string) => join(home, "logs", "service.log");

/** A log function appending timestamped lines to `path` (its folder is created, mode 0700). */
export function fileLog(path: string): (message: string) => void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return (message) => {
    try {
      appendFileSync(path, `${new Date().toISOString()} ${message}\n`, { mode: 0o600 });
    } catch {
      // a log line that cannot be written must not take the TUI down
    }
  };
}

const METHODS = ["log", "info", "warn", "error", "debug", "trace"] as const;

/** Sends console output to `log` (the terminal belongs to the TUI); returns the undo. */
export function redirectConsole(log: (message: string) => void): () => void {
  const saved = METHODS.map((m) => [m, console[m]] as const);
  for (const m of METHODS) console[m] = (...args: unknown[]) => log(format(...args));
  return () => {
    for (const [m, fn] of saved) console[m] = fn;
  };
}
