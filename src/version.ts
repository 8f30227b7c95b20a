import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

// Set by build.ts (`define`) in a compiled binary; not defined at all under `bun run`.
declare const SERVICE_BUILD_COMMIT: string;
declare const SERVICE_BUILD_DATE: string;

/** Which build this is; two builds of different source never name themselves alike. */
export interface BuildInfo {
  version: string;
  /** The git commit built (`-dirty` when the tree had changes), or "unknown" outside a checkout. */
  commit: string;
  /** When the binary was built (ISO 8601), or null when this runs from source. */
  date: string | null;
}

let info: BuildInfo | undefined;

/** This build; from source, the checkout's commit as it is now (asked of git once). */
export function buildInfo(): BuildInfo {
  info ??=
    typeof SERVICE_BUILD_COMMIT === "string"
      ? { version: VERSION, commit: SERVICE_BUILD_COMMIT, date: SERVICE_BUILD_DATE }
      : { version: VERSION, commit: gitCommit(import.meta.dir) ?? "unknown", date: null };
  return info;
}

/** "0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-27T13:15:02Z)", or "… running from source)". */
export function describeBuild(b: BuildInfo = buildInfo()): string {
  return `${b.version} (commit ${b.commit}, ${b.date ? `built ${b.date}` : "running from source"})`;
}

/** HEAD of the git checkout holding `dir`, with `-dirty` when files differ from it; undefined outside one. */
export function gitCommit(dir: string): string | undefined {
  const git = (...args: string[]) => {
    try {
      const r = Bun.spawnSync(["git", ...args], { cwd: dir, stdout: "pipe", stderr: "ignore" });
      return r.exitCode === 0 ? r.stdout.toString().trim() : undefined;
    } catch {
      return undefined; // no git
    }
  };
  const head = git("rev-parse", "--short=12", "HEAD");
  if (!head) return undefined;
  return git("status", "--porcelain") ? `${head}-dirty` : head;
}
