// Preloaded by `bun test` (bunfig.toml): what a test process started or wrote for its tests
// is gone after the last one.
// - Every temporary directory of the run (service homes, clones, browser profiles, a
//   PostgreSQL cluster's files) is made under one of the run's own: `TMPDIR` points there
//   for this process and the processes it starts, and it is removed at the end. Homes a test
//   keeps on purpose (a restart on the same home) went on lying in /tmp before.
// - `bun test` runs no `exit` handler, so a PostgreSQL cluster stopped there stayed running
//   after every run that used one.
import { afterAll } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopPostgres } from "./postgres";

const root = mkdtempSync(join(tmpdir(), "service-tests-"));
// traversable by PostgreSQL's own user, which runs the throwaway cluster when tests run as root
chmodSync(root, 0o711);
process.env.TMPDIR = root;

afterAll(async () => {
  await stopPostgres();
  rmSync(root, { recursive: true, force: true });
});
