import type { ParseArgsConfig } from "node:util";
import { databaseUrl, loadConfig, servicePaths, type Env, type Paths } from "../config/load";
import { CredentialStore } from "../extensions/credentials";
import { findInstalled, installExtension, listInstalled, removeExtension, setEnabled, type Installed } from "../extensions/installed";
import { STRICT_ACCESS } from "../extensions/hosts";
import { credentialsOf, extensionToolName, ManifestError, manifestWarnings } from "../extensions/manifest";
import { openDatabase, type Database } from "../store/db";
import type { WebAccess } from "../tools/builtin/web-guard";
import { parseSubcommand, UsageError } from "./args";

export const EXTENSION_USAGE = `Usage: service extension <command> [options]

Installs and manages extensions in $SERVICE_HOME/extensions/<name>/. A running
\`service serve\` picks up installs, removals, enable and disable when it restarts.

Commands:
  install <path>      check a folder's extension.json (and module), copy it in, enabled
  list                the installed extensions
  remove <name>       delete an extension and its stored credentials
  enable <name>       load the extension when serve starts
  disable <name>      keep it installed without loading it
  set-key <name>      store its API key, read from stdin, encrypted in the database

Options:
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text; every command also takes --help
`;

const USAGES: Record<string, string> = {
  install: `Usage: service extension install <path> [options]

Checks the folder's extension.json (name, tools, runtime, credentials) and, for a
WebAssembly runtime, its module; then copies the folder to $SERVICE_HOME/extensions/<name>/
and enables it. Its tools are named ext__<name>__<tool>.

A WebAssembly extension's network allow list may not hold bare wildcards or wildcards over
a public suffix (*, *.com, *.co.uk), nor loopback, link-local or cloud metadata hosts
(localhost, 127.0.0.1, 169.254.169.254, metadata.google.internal); a loopback or
link-local host listed in tools.web.allowHosts of config.json is let through. Its limits
are at most 60 s of CPU time (cpuMs) and 1 GiB of memory (memoryPages: 16384) a call.

Options:
  --force             replace an installed extension of the same name (its state is kept)
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
  list: `Usage: service extension list [options]

Lists the installed extensions: version, state, runtime, credentials and tools.

Options:
  --json              print JSON
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
  remove: `Usage: service extension remove <name> [options]

Deletes the extension's folder, its state and every credential stored for it.

Options:
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
  enable: `Usage: service extension enable <name> [options]

Loads the extension's tools when \`service serve\` next starts.

Options:
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
  disable: `Usage: service extension disable <name> [options]

Keeps the extension installed (and its credentials) without loading its tools when
\`service serve\` next starts.

Options:
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
  "set-key": `Usage: service extension set-key <name> [options] < key-file

Stores the API key of an extension whose manifest asks for one. The key is read from
stdin (asked for, hidden, on a terminal), encrypted with $SERVICE_HOME/secret.key and kept
in the database; it is never shown to the model or written to a log. A running service
uses it from its next call (an extension's MCP server after a restart).

Options:
  --home DIR          service home (default: $SERVICE_HOME or ~/.service)
  -h, --help          this text
`,
};

const FLAGS = {
  install: { force: { type: "boolean" } },
  list: { json: { type: "boolean" } },
} as const;

export async function extension(argv: string[]): Promise<number> {
  const parsed = parseSubcommand(
    argv,
    "extension",
    EXTENSION_USAGE,
    (command) => (USAGES[command] ? { ...(FLAGS as Record<string, NonNullable<ParseArgsConfig["options"]>>)[command], home: { type: "string" } } : undefined),
    (command) => USAGES[command]!,
  );
  if (!parsed) return 0;
  const { command, flags: f, positionals } = parsed;
  const usage = USAGES[command]!;
  const wanted = command === "list" ? 0 : 1;
  if (positionals.length !== wanted) {
    throw new UsageError(wanted ? `${command} takes one ${command === "install" ? "path" : "extension name"}` : `${command} takes no arguments`, usage);
  }
  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  // the operator's tools.web decides which loopback hosts an allow list may name; list and
  // set-key work without a readable config.json, and then allow none
  const access = (): WebAccess => loadConfig(paths, env).tools.web;
  const accessOrNone = (): WebAccess => {
    try {
      return access();
    } catch {
      return STRICT_ACCESS;
    }
  };
  const arg = positionals[0]!;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const fail = (line: string) => (process.stderr.write(`service: ${line}\n`), 1);

  switch (command) {
    case "install": {
      let result;
      try {
        result = installExtension(paths.home, arg, { force: f.force === true, access: access() });
      } catch (e) {
        if (e instanceof ManifestError) return fail(`cannot install ${arg}: ${e.message}`);
        throw e;
      }
      const m = result.manifest;
      out(`${result.replaced ? "replaced" : "installed"} ${m.name} ${m.version}: ${m.tools.map((t) => extensionToolName(m.name, t.name)).join(", ")}`);
      for (const warning of manifestWarnings(m)) process.stderr.write(`service: warning: ${warning}\n`);
      const c = credentialsOf(m);
      if (c.type === "api_key") out(`it needs its ${c.name}: run \`service extension set-key ${m.name}\``);
      if (c.type === "oauth2") out(`each user connects it (OAuth) from the web UI`);
      out("restart `service serve` to load it");
      return 0;
    }
    case "list":
      return list(paths, env, f.json === true, accessOrNone());
    case "remove": {
      if (!removeExtension(paths.home, arg)) return fail(`no extension named ${arg} is installed`);
      await withDatabase(paths, env, (db, store) => store(db).forget(arg)).catch((e) =>
        process.stderr.write(`service: removed, but its stored credentials could not be deleted: ${(e as Error).message}\n`),
      );
      out(`removed ${arg}; restart \`service serve\` to unload it`);
      return 0;
    }
    case "enable":
    case "disable": {
      if (!setEnabled(paths.home, arg, command === "enable")) return fail(`no extension named ${arg} is installed`);
      out(`${command}d ${arg}; restart \`service serve\` for it to take effect`);
      return 0;
    }
    case "set-key":
      return setKey(paths, env, arg, accessOrNone());
  }
  return 2;
}

type StoreOf = (db: Database) => CredentialStore;

/** Opens the service's database (the same one serve uses) for the duration of `fn`. */
async function withDatabase<T>(paths: Paths, env: Env, fn: (db: Database, store: StoreOf) => Promise<T>): Promise<T> {
  const config = loadConfig(paths, env);
  const db = await openDatabase(databaseUrl(config, paths), config.database.authToken);
  try {
    const say = (m: string) => void process.stderr.write(`service: ${m}\n`);
    return await fn(db, (d) => new CredentialStore(d.db, paths.home, () => {}, { warn: say, error: say }));
  } finally {
    db.close();
  }
}

async function list(paths: Paths, env: Env, json: boolean, access: WebAccess): Promise<number> {
  const installed = listInstalled(paths.home, access);
  // whether each API key is set; without the database the list is still worth printing
  const keys = new Map<string, boolean>();
  if (installed.some((e) => e.manifest && credentialsOf(e.manifest).type === "api_key")) {
    await withDatabase(paths, env, async (db, store) => {
      for (const e of installed) {
        if (e.manifest && credentialsOf(e.manifest).type === "api_key") keys.set(e.name, (await store(db).apiKey(e.name)) !== undefined);
      }
    }).catch(() => {});
  }
  const rows = installed.map((e) => row(e, keys.get(e.name)));
  if (json) {
    process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
    return 0;
  }
  if (!rows.length) {
    process.stdout.write(`no extensions installed in ${paths.home}/extensions\n`);
    return 0;
  }
  const table = [
    ["NAME", "VERSION", "STATE", "RUNTIME", "CREDENTIALS", "TOOLS"],
    ...rows.map((r) => [
      r.name,
      r.version ?? "-",
      r.error ? "broken" : r.enabled ? "enabled" : "disabled",
      r.runtime ?? "-",
      r.credentials + (r.key_set === undefined ? "" : r.key_set ? " (set)" : " (not set)"),
      r.error ? r.error : r.tools.join(", "),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  for (const line of table) process.stdout.write(line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ") + "\n");
  return 0;
}

function row(e: Installed, keySet: boolean | undefined) {
  const m = e.manifest;
  return {
    name: e.name,
    version: m?.version ?? null,
    enabled: e.enabled,
    runtime: m?.runtime.type ?? null,
    credentials: m ? credentialsOf(m).type : "none",
    ...(keySet === undefined ? {} : { key_set: keySet }),
    tools: m ? m.tools.map((t) => extensionToolName(m.name, t.name)) : [],
    error: e.error ?? null,
    description: m?.description ?? "",
  };
}

async function setKey(paths: Paths, env: Env, name: string, access: WebAccess): Promise<number> {
  const ext = findInstalled(paths.home, name, access);
  if (!ext) {
    process.stderr.write(`service: no extension named ${name} is installed\n`);
    return 1;
  }
  const c = ext.manifest ? credentialsOf(ext.manifest) : undefined;
  if (c?.type !== "api_key") {
    process.stderr.write(`service: the extension ${name} does not take an API key\n`);
    return 1;
  }
  const key = await readKey(`${c.name} for ${name}`);
  if (key === undefined) return 1;
  if (!key) {
    process.stderr.write("service: no key was given on stdin\n");
    return 1;
  }
  await withDatabase(paths, env, (db, store) => store(db).setApiKey(name, key));
  process.stdout.write(`stored the ${c.name} of ${name}, encrypted; a running service uses it from its next call\n`);
  return 0;
}

/** The key from stdin: asked for (hidden) on a terminal, else all of stdin. Undefined if cancelled. */
async function readKey(what: string): Promise<string | undefined> {
  if (process.stdin.isTTY) {
    const p = await import("@clack/prompts");
    const value = await p.password({ message: `Paste the ${what}` });
    if (p.isCancel(value)) return undefined;
    return String(value).trim();
  }
  return (await Bun.stdin.text()).trim();
}
