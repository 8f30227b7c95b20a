#!/usr/bin/env bun
/**
 * The release binaries, one for each kind of box a homelab runs the service on, each with its
 * own libSQL addon, and beside each a SHA-256 checksum file in sha256sum's format
 * (`sha256sum -c service-linux-arm64.sha256`), which install.sh checks before installing:
 *
 *   linux-x64        PCs and servers (glibc: Debian, Ubuntu, Fedora…)
 *   linux-arm64      Raspberry Pi 4/5 and other 64-bit ARM boards (glibc)
 *   linux-x64-musl   Alpine
 *
 *   bun run build:release                    # all of them, into dist/release/
 *   bun run build:release linux-arm64        # some
 *
 * Beside them go install.sh, README.md with the pages of docs/, and service.service: the folder
 * is a release as it is published, and `./install.sh` in it installs the binary for the machine
 * it runs on.
 *
 * A target's @libsql package that `bun install` left out (it installs the host's) is fetched
 * from the npm registry at the version libsql pins, into dist/release/.addons/.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const out = join(root, "dist/release");

export const TARGETS = {
  "linux-x64": { bun: "bun-linux-x64", libsql: "@libsql/linux-x64-gnu", cpu: "x64" },
  "linux-arm64": { bun: "bun-linux-arm64", libsql: "@libsql/linux-arm64-gnu", cpu: "arm64" },
  "linux-x64-musl": { bun: "bun-linux-x64-musl", libsql: "@libsql/linux-x64-musl", cpu: "x64" },
} as const;
type Target = keyof typeof TARGETS;

function fail(message: string): never {
  console.error(`build:release: ${message}`);
  process.exit(1);
}

/** Where the target's libSQL addon package is: node_modules, or fetched at the version libsql pins. */
function libsqlDir(target: Target): string {
  const { libsql, cpu } = TARGETS[target];
  const pinned = (JSON.parse(readFileSync(join(root, "node_modules/libsql/package.json"), "utf8")) as { optionalDependencies: Record<string, string> })
    .optionalDependencies[libsql];
  if (!pinned) fail(`libsql does not list ${libsql}`);
  const installed = join(root, "node_modules", libsql);
  if (existsSync(join(installed, "package.json")) && JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version === pinned) return installed;
  const dir = join(out, ".addons", target);
  const fetched = join(dir, "node_modules", libsql);
  if (!existsSync(join(fetched, "package.json")) || JSON.parse(readFileSync(join(fetched, "package.json"), "utf8")).version !== pinned) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, dependencies: { [libsql]: pinned } }, null, 2));
    console.log(`build:release: fetching ${libsql}@${pinned}`);
    const install = Bun.spawnSync(["bun", "install", `--cpu=${cpu}`, "--os=linux"], { cwd: dir, stdout: "inherit", stderr: "inherit" });
    if (install.exitCode !== 0 || !existsSync(join(fetched, "package.json"))) fail(`could not fetch ${libsql}@${pinned}`);
  }
  return fetched;
}

/** `<hex>  <name>`, as sha256sum writes and checks it. */
async function checksumLine(file: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hash.update(chunk);
  return `${hash.digest("hex")}  ${basename(file)}\n`;
}

export async function buildRelease(target: Target): Promise<string> {
  const binary = join(out, `service-${target}`);
  const build = Bun.spawnSync(
    ["bun", "run", join(root, "build.ts"), "--target", TARGETS[target].bun, "--outfile", binary, "--libsql-dir", libsqlDir(target)],
    { cwd: root, stdout: "inherit", stderr: "inherit" },
  );
  if (build.exitCode !== 0) fail(`the ${target} binary did not build`);
  rmSync(`${binary}.map`, { force: true }); // the map is inside the binary already
  writeFileSync(`${binary}.sha256`, await checksumLine(binary));
  return binary;
}

if (import.meta.main) {
  const wanted = Bun.argv.slice(2);
  for (const w of wanted) if (!(w in TARGETS)) fail(`unknown target ${w}; the targets are ${Object.keys(TARGETS).join(", ")}`);
  mkdirSync(out, { recursive: true });
  for (const target of (wanted.length ? wanted : Object.keys(TARGETS)) as Target[]) {
    const binary = await buildRelease(target);
    console.log(`build:release: ${binary} and ${basename(binary)}.sha256`);
  }
  // what a release folder holds besides: the installer, the manual, the systemd unit
  for (const f of ["install.sh", "README.md", "docs/service.service"]) copyFileSync(join(root, f), join(out, basename(f)));
  mkdirSync(join(out, "docs"), { recursive: true });
  for (const page of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))) copyFileSync(join(root, "docs", page), join(out, "docs", page));
}
