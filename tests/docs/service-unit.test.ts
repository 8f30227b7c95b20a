// docs/service.service, checked by systemd itself (`systemd-analyze verify --user`, from
// Debian's systemd package; skipped with one line where it is missing, CI installs it): no
// warning at all, and no restart after a configuration error, whose exit code the unit names.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXIT_CONFIG } from "../../src/errors";
import { root } from "../support/binary";

const ANALYZE = Bun.which("systemd-analyze");
if (!ANALYZE) console.log("skipped: checking docs/service.service needs systemd-analyze (apt-get install systemd)");

const UNIT = join(root, "docs/service.service");
let dir: string;

/** What systemd-analyze says of a unit file, run as a user's manager with the unit's binary in place. */
function verify(file: string) {
  const r = Bun.spawnSync([ANALYZE!, "verify", "--user", "--man=no", file], {
    env: { PATH: process.env.PATH ?? "", HOME: join(dir, "home"), XDG_RUNTIME_DIR: join(dir, "run") },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, said: (r.stdout.toString() + r.stderr.toString()).trim() };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "service-unit-"));
  mkdirSync(join(dir, "run"), { mode: 0o700 });
  mkdirSync(join(dir, "home/.local/bin"), { recursive: true });
  // ExecStart=%h/.local/bin/service serve: systemd checks that it is there and executable
  writeFileSync(join(dir, "home/.local/bin/service"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(dir, "home/.local/bin/service"), 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!ANALYZE)("docs/service.service", () => {
  test("systemd-analyze verify --user has nothing to say about it", () => {
    expect(verify(UNIT)).toEqual({ code: 0, said: "" });
  });

  test("the check has teeth: the old mistakes are reported", () => {
    const unit = readFileSync(UNIT, "utf8");
    const broken = join(dir, "broken.service");
    writeFileSync(
      broken,
      unit
        .replace(/^Documentation=.*$/m, 'Documentation=https://github.com/ (README.md, "Running as a systemd user service")')
        .replace("[Service]\n", "[Service]\nStartLimitIntervalSec=120\n"),
    );
    const said = verify(broken).said;
    expect(said).toContain("Invalid URL");
    expect(said).toContain("Unknown key 'StartLimitIntervalSec' in section [Service]");
  });

  test("a configuration error is not restarted; a user unit waits for no network-online.target", () => {
    const unit = readFileSync(UNIT, "utf8");
    expect(unit).toMatch(/^Restart=on-failure$/m);
    const prevented = /^RestartPreventExitStatus=(.*)$/m.exec(unit)?.[1]?.split(/\s+/);
    expect(prevented).toContain(String(EXIT_CONFIG));
    expect(prevented).toContain("2"); // a wrong flag
    expect(unit).not.toContain("network-online.target");
    // the start limit is the unit's, where systemd reads it
    const unitSection = unit.slice(unit.indexOf("[Unit]"), unit.indexOf("[Service]"));
    expect(unitSection).toMatch(/^StartLimitIntervalSec=\d+$/m);
  });
});
