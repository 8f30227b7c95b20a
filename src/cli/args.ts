import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** Strict flag parsing: an unknown flag or a missing value is a usage error (exit 2). */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false })
      .values as unknown as Record<keyof T | "help", string | boolean | undefined>;
  } catch (e) {
    throw new UsageError((e as Error).message, usage);
  }
}
