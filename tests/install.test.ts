// install.sh picks the binary for the machine it runs on (uname and the C library, stubbed
// here), and installs it only once its SHA-256 matches the checksum file beside it, from a
// directory or downloaded over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "./support/binary";

const PLATFORMS = ["linux-x64", "linux-arm64", "linux-x64-musl"];
let dir: string;
let release: string;
let server: ReturnType<typeof Bun.serve>;
/** Where install.sh puts the manual (HOME is `dir`). */
let doc: string;

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "service-install-"));
  release = join(dir, "release");
  doc = join(dir, ".local/share/doc/service");
  mkdirSync(release);
  // stand-in binaries: each says which one it is
  for (const p of PLATFORMS) {
    const body = `#!/bin/sh\necho "service for ${p}"\n`;
    writeFileSync(join(release, `service-${p}`), body, { mode: 0o755 });
    writeFileSync(join(release, `service-${p}.sha256`), `${sha256(body)}  service-${p}\n`);
  }
  // the manual: a README and a page of docs/ it links to
  writeFileSync(join(release, "README.md"), "# the release's README\n\n[Operations](docs/operations.md)\n");
  mkdirSync(join(release, "docs"));
  writeFileSync(join(release, "docs/operations.md"), "# the release's operations page\n");
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(Bun.file(join(release, new URL(req.url).pathname.slice(1)))) });
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

/** A directory of commands standing in for uname and ldd, put first on PATH. */
function machine(name: string, arch: string, ldd: string): string {
  const bin = join(dir, `bin-${name}`);
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "uname"), `#!/bin/sh\ncase "$1" in -s) echo Linux ;; -m) echo ${arch} ;; esac\n`);
  writeFileSync(join(bin, "ldd"), `#!/bin/sh\necho "${ldd}" >&2\nexit 1\n`);
  chmodSync(join(bin, "uname"), 0o755);
  chmodSync(join(bin, "ldd"), 0o755);
  return bin;
}
const glibc = "ldd (Debian GLIBC 2.36-9+deb12u13) 2.36";
const musl = "musl libc (x86_64)\nVersion 1.2.5";

/** Runs install.sh (not blocking: the download test's server answers meanwhile). */
async function install(bin: string, env: Record<string, string>, script = join(root, "install.sh")) {
  const prefix = mkdtempSync(join(dir, "prefix-"));
  const p = Bun.spawn(["sh", script], {
    cwd: dir,
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, PREFIX: prefix, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const installed = join(prefix, "service");
  return { code, out: out + err, installed: existsSync(installed) ? readFileSync(installed, "utf8") : undefined };
}

describe("install.sh", async () => {
  test("picks the binary for the machine: x86_64 glibc, aarch64 glibc, x86_64 musl", async () => {
    for (const [name, arch, ldd, platform] of [
      ["pc", "x86_64", glibc, "linux-x64"],
      ["pi", "aarch64", glibc, "linux-arm64"],
      ["alpine", "x86_64", musl, "linux-x64-musl"],
    ] as const) {
      const r = await install(machine(name, arch, ldd), { SERVICE_RELEASE_URL: release });
      expect({ name, code: r.code, out: r.out }).toMatchObject({ name, code: 0, out: expect.stringContaining(`platform ${platform}`) });
      expect(r.installed).toContain(`service for ${platform}`);
      expect(r.out).toContain(`(service for ${platform})`); // it ran --version once installed
    }
    // the README goes where the systemd unit's Documentation= points, with the pages it links to
    expect(readFileSync(join(doc, "README.md"), "utf8")).toBe(readFileSync(join(root, "README.md"), "utf8"));
    expect(readFileSync(join(doc, "docs/operations.md"), "utf8")).toBe(readFileSync(join(root, "docs/operations.md"), "utf8"));
  });

  test("downloads over HTTP, checksum first", async () => {
    const r = await install(machine("pi", "aarch64", glibc), { SERVICE_RELEASE_URL: `http://127.0.0.1:${server.port}` });
    expect(r.code).toBe(0);
    expect(r.out).toContain("checksum matches service-linux-arm64.sha256");
    expect(r.installed).toContain("service for linux-arm64");
  });

  test("downloaded, the manual comes from the same place: the README and the pages of docs/ it links to", async () => {
    rmSync(doc, { recursive: true, force: true });
    const script = join(dir, "alone/install.sh"); // no README beside it
    mkdirSync(join(dir, "alone"));
    writeFileSync(script, readFileSync(join(root, "install.sh")));
    const r = await install(machine("pi", "aarch64", glibc), { SERVICE_RELEASE_URL: `http://127.0.0.1:${server.port}` }, script);
    expect(r.code).toBe(0);
    expect(readFileSync(join(doc, "README.md"), "utf8")).toContain("the release's README");
    expect(readFileSync(join(doc, "docs/operations.md"), "utf8")).toContain("the release's operations page");
  });

  test("run in a release folder, it installs the binary beside it", async () => {
    const folder = join(dir, "folder");
    mkdirSync(folder);
    cpSync(release, folder, { recursive: true });
    writeFileSync(join(folder, "install.sh"), readFileSync(join(root, "install.sh")));
    rmSync(doc, { recursive: true, force: true });
    const r = await install(machine("pi", "aarch64", glibc), {}, join(folder, "install.sh"));
    expect(r.code).toBe(0);
    expect(r.installed).toContain("service for linux-arm64");
    expect(readFileSync(join(doc, "docs/operations.md"), "utf8")).toContain("the release's operations page");
  });

  test("a binary that does not match its checksum is not installed", async () => {
    const bad = join(dir, "tampered");
    mkdirSync(bad);
    cpSync(release, bad, { recursive: true });
    writeFileSync(join(bad, "service-linux-arm64"), "#!/bin/sh\necho evil\n");
    const r = await install(machine("pi", "aarch64", glibc), { SERVICE_RELEASE_URL: bad });
    expect(r.code).toBe(1);
    expect(r.out).toContain("service-linux-arm64 does not match its checksum");
    expect(r.installed).toBeUndefined();
    const missing = await install(machine("pi", "aarch64", glibc), { SERVICE_RELEASE_URL: join(dir, "nowhere") });
    expect(missing.code).toBe(1);
    expect(missing.installed).toBeUndefined();
  });

  test("32-bit ARM and arm64 musl are told what to do; SERVICE_PLATFORM overrides the detection", async () => {
    const armv7 = await install(machine("pi2", "armv7l", glibc), { SERVICE_RELEASE_URL: release });
    expect(armv7.code).toBe(1);
    expect(armv7.out).toContain("32-bit ARM (armv7l) is not supported");
    const alpineArm = await install(machine("alpine-arm", "aarch64", musl), { SERVICE_RELEASE_URL: release });
    expect(alpineArm.out).toContain("no binary for arm64 with musl");
    const forced = await install(machine("pc", "x86_64", glibc), { SERVICE_RELEASE_URL: release, SERVICE_PLATFORM: "linux-x64-musl" });
    expect(forced.installed).toContain("service for linux-x64-musl");
  });
});
