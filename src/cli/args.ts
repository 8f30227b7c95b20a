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

/**
 * A command of subcommands (`service users create …`): the subcommand, its flags and its
 * positionals; undefined when help was asked for (and printed). `flagsOf` gives a
 * subcommand's flags, or undefined for an unknown one; `usageOf` its usage text.
 */
export function parseSubcommand(
  argv: string[],
  what: string,
  usage: string,
  flagsOf: (command: string) => NonNullable<ParseArgsConfig["options"]> | undefined,
  usageOf: (command: string) => string = () => usage,
): { command: string; flags: Record<string, string | boolean | undefined>; positionals: string[] } | undefined {
  const [command, ...rest] = argv;
  if (!command) throw new UsageError(`which ${what} command?`, usage);
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(usage);
    return undefined;
  }
  const flags = flagsOf(command);
  if (!flags) throw new UsageError(`unknown ${what} command '${command}'`, usage);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...flags, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError((e as Error).message, usageOf(command));
  }
  if (parsed.values.help) {
    process.stdout.write(usageOf(command));
    return undefined;
  }
  return { command, flags: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
}
