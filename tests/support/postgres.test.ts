// A `bun test` run that used a throwaway PostgreSQL cluster leaves none running: `bun test`
// runs no `exit` handler, and every run of the suite used to leave a postgres server behind.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { skipWithoutPostgres } from "./postgres";

const root = resolve(import.meta.dir, "../..");

const listening = (port: number) =>
  new Promise<boolean>((done) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), done(true)));
    s.once("error", () => done(false));
  });

test("the cluster a test run started is stopped after its last test", async () => {
  if (skipWithoutPostgres()) return;
  const dir = mkdtempSync(join(tmpdir(), "pg-run-"));
  try {
    const portFile = join(dir, "port");
    writeFileSync(
      join(dir, "uses-postgres.test.ts"),
      `import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { freshPostgres } from ${JSON.stringify(join(root, "tests/support/postgres.ts"))};
test("a database", async () => {
  const url = new URL(await freshPostgres());
  writeFileSync(${JSON.stringify(portFile)}, url.port);
  expect(url.protocol).toBe("postgres:");
});
`,
    );
    // this repository's bunfig.toml, as `bun run test` has it
    const run = Bun.spawnSync(["bun", "test", join(dir, "uses-postgres.test.ts")], { cwd: root, stdout: "pipe", stderr: "pipe" });
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    const port = Number(readFileSync(portFile, "utf8"));
    expect(port).toBeGreaterThan(0);
    expect(await listening(port)).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
