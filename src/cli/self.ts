import { realpathSync } from "node:fs";

/**
 * How a person runs this very program again: `service` when that name resolves to it on the
 * PATH, else the binary's full path (on Debian `service` alone is /usr/sbin/service, which is
 * not this one); from source, bun and the entry file.
 */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string {
  const compiled = process.argv[1]?.startsWith("/$bunfs/") ?? false;
  if (!compiled) return `bun ${quoted(process.argv[1] ?? "src/main.ts")}`;
  const found = Bun.which("service", { PATH: env.PATH ?? "" });
  try {
    if (found && realpathSync(found) === realpathSync(process.execPath)) return "service";
  } catch {
    // a PATH entry that went away: the full path it is
  }
  return quoted(process.execPath);
}

const quoted = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`);
