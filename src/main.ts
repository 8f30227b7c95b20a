#!/usr/bin/env bun
import { UsageError } from "./cli/args";
import { USAGE } from "./cli/usage";
import { ConfigError } from "./errors";
import { describeBuild } from "./version";

// Loaded on demand: `serve` need not carry the onboarding prompts in memory, nor the reverse.
const commands: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  onboard: async () => (await import("./cli/onboard")).onboard,
  serve: async () => {
    (await import("./cli/relaunch")).relaunchWithRuntimeOptions();
    return (await import("./cli/serve")).serve;
  },
  chat: async () => (await import("./cli/chat")).chat,
  extension: async () => (await import("./cli/extension")).extension,
  users: async () => (await import("./cli/users")).users,
  routines: async () => (await import("./cli/routines")).routines,
  approvals: async () => (await import("./cli/approvals")).approvals,
  status: async () => (await import("./cli/status")).status,
  usage: async () => (await import("./cli/usage-report")).usage,
  doctor: async () => (await import("./cli/doctor")).doctor,
  // internal: one call of an extension's WebAssembly tool, in its own process (extensions/wasm/host.ts)
  "__wasm-sandbox": async () => (await import("./extensions/wasm/sandbox")).sandboxMain,
};

async function main(argv: string[]): Promise<number> {
  process.umask(0o077); // everything the service writes (database, tokens, files) is private
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`service ${describeBuild()}\n`);
    return 0;
  }
  const load = commands[command];
  if (!load) {
    process.stderr.write(`service: unknown command or flag '${command}'\n\n${USAGE}`);
    return 2;
  }
  return (await load())(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`service: ${e.message}\n\n${e.usage}`);
    process.exitCode = 2;
  } else if (e instanceof ConfigError) {
    process.stderr.write(`service: ${e.message}\n`);
    process.exitCode = e.exitCode;
  } else {
    process.stderr.write(`service: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  }
}
