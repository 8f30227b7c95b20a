#!/usr/bin/env bun
import { UsageError } from "./cli/args";
import { onboard } from "./cli/onboard";
import { serve } from "./cli/serve";
import { USAGE } from "./cli/usage";
import { ConfigError } from "./errors";
import { VERSION } from "./version";

const commands: Record<string, (argv: string[]) => Promise<number>> = { onboard, serve };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`service ${VERSION}\n`);
    return 0;
  }
  const run = commands[command];
  if (!run) {
    process.stderr.write(`service: unknown command or flag '${command}'\n\n${USAGE}`);
    return 2;
  }
  return run(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`service: ${e.message}\n\n${e.usage}`);
    process.exitCode = 2;
  } else if (e instanceof ConfigError) {
    process.stderr.write(`service: ${e.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`service: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  }
}
