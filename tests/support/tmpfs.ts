// A small tmpfs for tests that need a disk that fills up or a file system that is read-only.
// Mounting needs root (CAP_SYS_ADMIN): where it is refused, `canMountTmpfs` says so in one
// line and the test that needs it is skipped. Mount in a `beforeAll` and unmount in its
// `afterAll`, so that a filtered-out test leaves nothing mounted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Tmpfs {
  dir: string;
  /** `mount -o remount,<options>`: `ro` or `rw`. */
  remount(options: string): void;
  unmount(): void;
}

const mount = (...args: string[]) => Bun.spawnSync(["mount", ...args], { stdout: "ignore", stderr: "pipe" });

/** Mounts a tmpfs of `size` (`4m`) on a new temporary folder; throws when mount refuses. */
export function mountTmpfs(size: string): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), "tmpfs-"));
  const mounted = mount("-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir);
  if (mounted.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs: ${mounted.stderr.toString().trim() || "refused"}`);
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

/** Whether a tmpfs can be mounted here (tried once); when not, one line says which test is skipped and why. */
export function canMountTmpfs(why: string): boolean {
  try {
    mountTmpfs("64k").unmount();
    return true;
  } catch (e) {
    console.warn(`skipped: ${why} needs a small tmpfs, and ${(e as Error).message} (not root?)`);
    return false;
  }
}
