// A small tmpfs for tests that need a disk that fills up or a file system that is read-only.
// Mounting needs root (CAP_SYS_ADMIN): where it is refused, `mountTmpfs` says so in one line
// and returns undefined, and the test that needs it is skipped.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Tmpfs {
  dir: string;
  /** `mount -o remount,<options>`: `ro` or `rw`. */
  remount(options: string): void;
  unmount(): void;
}

export function mountTmpfs(size: string, why: string): Tmpfs | undefined {
  const dir = mkdtempSync(join(tmpdir(), "tmpfs-"));
  const mount = (...args: string[]) => Bun.spawnSync(["mount", ...args], { stdout: "ignore", stderr: "pipe" });
  const mounted = mount("-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir);
  if (mounted.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    console.warn(`skipped: ${why} needs a small tmpfs, and mount refused it (${mounted.stderr.toString().trim() || "not root?"})`);
    return undefined;
  }
  return {
    dir,
    remount(options) {
      const r = mount("-o", `remount,${options}`, dir);
      if (r.exitCode !== 0) throw new Error(`mount -o remount,${options}: ${r.stderr}`);
    },
    unmount() {
      Bun.spawnSync(["umount", "-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
