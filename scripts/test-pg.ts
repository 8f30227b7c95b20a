// `bun run test:pg`: the store and end-to-end suites on PostgreSQL. Each service a test starts
// (tests/support/harness.ts, and the binaries of the end-to-end tests) gets a new database on
// a throwaway cluster from Debian's `postgresql` package (tests/support/postgres.ts). Where
// PostgreSQL is not installed, it says so in one line and passes.
import { Glob } from "bun";
import { pgInstalled } from "../tests/support/postgres";

/**
 * The suites that run on both stores: everything that reaches the store through the service,
 * and the binary killed mid-job. (tests/e2e/replicas.test.ts runs on PostgreSQL in any case.)
 */
const SUITES = ["store", "api", "channels", "routines", "agent", "context", "gateway", "usage", "auth", "memory", "tools", "e2e/effects-once.test.ts"];

/**
 * Files that open or break the libSQL file underneath the service (to look inside it, or to
 * take it away), or drive a browser for minutes; the same features run above on PostgreSQL
 * through the files beside them.
 */
const LIBSQL_ONLY = new Set([
  "store/db.test.ts",
  "store/unavailable.test.ts",
  "agent/identity.test.ts",
  "api/admin/manage.test.ts",
  "api/admin/users.test.ts",
  "auth/auth.test.ts",
  "auth/sso.test.ts",
  "auth/sso-browser.test.ts",
  "channels/webhook/callbacks.test.ts",
  "channels/webhook/durability.test.ts",
  "gateway/branches.test.ts",
  "gateway/web.test.ts",
  "gateway/web-state.test.ts",
  "gateway/web-ui.test.ts",
  "gateway/web-usage.test.ts",
  "gateway/routines-web.test.ts",
  "memory/hybrid.test.ts",
  "memory/migration.test.ts",
  "memory/paths.test.ts",
  "memory/search.test.ts",
  "routines/scheduler.test.ts",
  "usage/accounting.test.ts",
]);

if (!pgInstalled) {
  console.log("PostgreSQL is not installed (Debian's `postgresql` package): the PostgreSQL suites are skipped");
  process.exit(0);
}

const files: string[] = [];
for (const suite of SUITES) {
  const pattern = suite.endsWith(".ts") ? suite : `${suite}/**/*.test.ts`;
  for await (const f of new Glob(pattern).scan({ cwd: "tests" })) if (!LIBSQL_ONLY.has(f)) files.push(`./tests/${f}`);
}
const run = Bun.spawn(["bun", "test", "--timeout", "30000", ...files.sort()], {
  env: { ...process.env, TEST_DATABASE: "postgres" },
  stdio: ["ignore", "inherit", "inherit"],
});
process.exit(await run.exited);
