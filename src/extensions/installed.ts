import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { WebAccess } from "../tools/builtin/web-guard";
import { STRICT_ACCESS } from "./hosts";
import { DEFAULT_MEMORY_PAGES, inspectModule, type ModuleShape } from "./wasm/abi";
import { EXTENSION_NAME, ManifestError, readManifest, type Manifest, type WasmRuntime } from "./manifest";

/**
 * Installed extensions live in `$SERVICE_HOME/extensions/<name>/`; which of them are enabled
 * is kept in `$SERVICE_HOME/extensions/state.json` (`{"<name>": {"enabled": true}}`), so the
 * CLI changes it without the database. `serve` reads both when it starts.
 */
export const extensionsDir = (home: string) => join(home, "extensions");
const stateFile = (home: string) => join(extensionsDir(home), "state.json");

type State = Record<string, { enabled: boolean }>;

export interface Installed {
  name: string;
  dir: string;
  enabled: boolean;
  manifest?: Manifest;
  /** Why the extension cannot be loaded (a broken manifest or module). */
  error?: string;
}

function readState(home: string): State {
  const file = stateFile(home);
  if (!existsSync(file)) return {};
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as State) : {};
  } catch {
    return {};
  }
}

function writeState(home: string, state: State): void {
  mkdirSync(extensionsDir(home), { recursive: true, mode: 0o700 });
  const tmp = `${stateFile(home)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  renameSync(tmp, stateFile(home));
}

/** The module file of a wasm extension, checked against the interface; throws ManifestError. */
export function checkWasmModule(dir: string, m: Manifest & { runtime: WasmRuntime }): ModuleShape & { path: string } {
  const path = resolve(dir, m.runtime.module);
  if (!existsSync(path)) throw new ManifestError(`runtime.module ${m.runtime.module} does not exist in ${dir}`);
  try {
    const shape = inspectModule(readFileSync(path), m.tools.map((t) => t.name), m.runtime.limits?.memoryPages ?? DEFAULT_MEMORY_PAGES);
    return { ...shape, path };
  } catch (e) {
    throw new ManifestError(`${m.runtime.module}: ${(e as Error).message}`);
  }
}

/**
 * Reads and checks an extension folder: its manifest and, for wasm, its module. `access`
 * is the operator's `tools.web` (a loopback host it lists may be on an allow list).
 */
export function checkExtension(dir: string, access: WebAccess = STRICT_ACCESS): Manifest {
  const m = readManifest(dir, access);
  if (m.runtime.type === "wasm") checkWasmModule(dir, m as Manifest & { runtime: WasmRuntime });
  else if (/[\\/]/.test(m.runtime.command) && !isAbsolute(m.runtime.command) && !existsSync(resolve(dir, m.runtime.command))) {
    throw new ManifestError(`runtime.command ${m.runtime.command} does not exist in ${dir}`);
  }
  return m;
}

/**
 * The installed extensions, each checked as at install: one that no longer passes (an
 * allow list or limits this version refuses, say) is listed with its error and not loaded.
 */
export function listInstalled(home: string, access: WebAccess = STRICT_ACCESS): Installed[] {
  const root = extensionsDir(home);
  if (!existsSync(root)) return [];
  const state = readState(home);
  return readdirSync(root)
    .filter((name) => EXTENSION_NAME.test(name) && statSync(join(root, name)).isDirectory())
    .sort()
    .map((name) => {
      const dir = join(root, name);
      const enabled = state[name]?.enabled ?? true;
      try {
        const manifest = checkExtension(dir, access);
        if (manifest.name !== name) return { name, dir, enabled, error: `its manifest names it ${manifest.name}` };
        return { name, dir, enabled, manifest };
      } catch (e) {
        return { name, dir, enabled, error: (e as Error).message };
      }
    });
}

export function findInstalled(home: string, name: string, access: WebAccess = STRICT_ACCESS): Installed | undefined {
  return listInstalled(home, access).find((e) => e.name === name);
}

/**
 * Checks the folder, then copies it to `extensions/<name>/` (enabled). An installed
 * extension of the same name is replaced only with `force`, and keeps its enabled state.
 */
export function installExtension(
  home: string,
  source: string,
  opts: { force?: boolean; access?: WebAccess } = {},
): { manifest: Manifest; replaced: boolean } {
  const from = resolve(source);
  if (!existsSync(from) || !statSync(from).isDirectory()) throw new ManifestError(`${source} is not a folder`);
  const manifest = checkExtension(from, opts.access);
  const root = extensionsDir(home);
  const target = join(root, manifest.name);
  const replaced = existsSync(target);
  if (replaced && !opts.force) {
    throw new ManifestError(`an extension named ${manifest.name} is already installed; remove it first or install with --force`);
  }
  if (resolve(target) === from) throw new ManifestError(`${source} is the installed copy itself`);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  // copied next to its place first, so a failed copy leaves the installed one as it was
  const staging = join(root, `.${manifest.name}.${process.pid}.installing`);
  rmSync(staging, { recursive: true, force: true });
  // links are copied as links (a bundled server's node_modules/.bin keeps working)
  cpSync(from, staging, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.split(/[\\/]/).includes(".git") });
  if (replaced) rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  const state = readState(home);
  state[manifest.name] = { enabled: replaced ? (state[manifest.name]?.enabled ?? true) : true };
  writeState(home, state);
  return { manifest, replaced };
}

/** Deletes the folder and its state; false when no such extension is installed. */
export function removeExtension(home: string, name: string): boolean {
  const dir = join(extensionsDir(home), name);
  if (!EXTENSION_NAME.test(name) || !existsSync(dir)) return false;
  rmSync(dir, { recursive: true, force: true });
  const state = readState(home);
  delete state[name];
  writeState(home, state);
  return true;
}

/** False when no such extension is installed. */
export function setEnabled(home: string, name: string, enabled: boolean): boolean {
  if (!EXTENSION_NAME.test(name) || !existsSync(join(extensionsDir(home), name))) return false;
  const state = readState(home);
  state[name] = { enabled };
  writeState(home, state);
  return true;
}
