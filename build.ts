#!/usr/bin/env bun
/**
 * Compiles src/main.ts into one self-contained executable: dist/service.
 *
 *   bun run build                       # src/main.ts -> dist/service (this platform)
 *   bun run build.ts --entry x.ts --outfile /tmp/x   # other entry (scratch checks)
 *   bun run build.ts --target bun-linux-arm64        # cross-compile (needs that
 *                                                    # platform's @libsql package installed)
 *   bun run build.ts --no-bytecode                   # plain JS in the binary (slower start)
 *   bun run build.ts --no-sourcemap                  # stack traces point into the bundle
 *
 * Inside the code, `SERVICE_BUILD_VERSION` is replaced by package.json's version:
 *   declare const SERVICE_BUILD_VERSION: string | undefined;
 *   const v = typeof SERVICE_BUILD_VERSION !== "undefined" ? SERVICE_BUILD_VERSION : "dev";
 */
import type { BunPlugin } from "bun";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = import.meta.dir;

function fail(message: string): never {
  console.error(`build: ${message}`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      entry: { type: "string", default: resolve(root, "src/main.ts") },
      outfile: { type: "string", default: resolve(root, "dist/service") },
      target: { type: "string" }, // e.g. bun-linux-x64, bun-linux-arm64, bun-darwin-arm64
      "no-bytecode": { type: "boolean", default: false },
      "no-sourcemap": { type: "boolean", default: false },
    },
    strict: true,
  });
} catch (err) {
  fail(`${(err as Error).message}\nusage: bun run build.ts [--entry src/main.ts] [--outfile dist/service] [--target bun-linux-x64] [--no-bytecode] [--no-sourcemap]`);
}
const args = parsed.values;

const pkg = (await Bun.file(resolve(root, "package.json")).json()) as { version: string };
const entry = resolve(args.entry!);
const outfile = resolve(args.outfile!);
const target = args.target as Bun.Build.CompileTarget | undefined;
const bytecode = !args["no-bytecode"];
const sourcemap = !args["no-sourcemap"];

/** The @libsql/<platform> package name for the platform the binary is built for. */
function libsqlPlatformPackage(compileTarget?: string): string {
  let os: string = process.platform;
  let arch: string = process.arch;
  let libc = "gnu";
  if (compileTarget) {
    const m = /^bun-(linux|darwin|windows)-(x64|arm64|aarch64)(?:-(?:baseline|modern))?(?:-(glibc|musl))?$/.exec(compileTarget);
    if (!m) fail(`unrecognised --target ${compileTarget} (expected e.g. bun-linux-x64, bun-darwin-arm64)`);
    os = m[1] === "windows" ? "win32" : m[1]!;
    arch = m[2] === "aarch64" ? "arm64" : m[2]!;
    if (m[3] === "musl") libc = "musl";
  }
  if (os === "linux") return `@libsql/linux-${arch}-${libc}`;
  if (os === "darwin") return `@libsql/darwin-${arch}`;
  if (os === "win32") return `@libsql/win32-${arch}-msvc`;
  fail(`no libsql package for ${os}-${arch}`);
}

/**
 * libsql (the native driver behind @libsql/client's `file:` URLs) loads its addon with
 * require(`@libsql/${target}`), which the bundler cannot follow, so a compiled binary
 * fails with "Cannot find module '@libsql/linux-x64-gnu'". Rewrite it to a literal
 * require so the .node addon is embedded (Bun extracts it to $TMPDIR at run time).
 */
function libsqlNativePlugin(platformPackage: string): BunPlugin {
  return {
    name: "libsql-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/](index|promise)\.js$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        const dynamic = /require\(\s*`@libsql\/\$\{target\}`\s*\)/g;
        if (!dynamic.test(source)) {
          throw new Error(`libsql-native: computed require not found in ${path}; libsql changed, update build.ts`);
        }
        const contents = source
          .replace(dynamic, `require(${JSON.stringify(platformPackage)})`)
          // promise.js carries `if (0) require("./.targets")` for other bundlers; that file does not exist.
          .replace(/require\(\s*["']\.\/\.targets["']\s*\)/g, "undefined");
        return { contents, loader: "js" };
      });
    },
  };
}

const libsqlPackage = libsqlPlatformPackage(target);
if (!existsSync(resolve(root, "node_modules", libsqlPackage))) {
  fail(`${libsqlPackage} is not installed (node_modules/${libsqlPackage}); run bun install on/for that platform`);
}

/** Add plugins here (blessed's computed requires, ...). */
const plugins: BunPlugin[] = [libsqlNativePlugin(libsqlPackage)];

/**
 * Files or folders (relative to the repo root) embedded as-is. Each one lands under its
 * BASENAME: "src/web" -> /$bunfs/root/web/..., readable with node:fs / Bun.file at
 * join(import.meta.dir, "web") in the binary (import.meta.dir is "/$bunfs/root" in every module).
 */
const assets: string[] = [];
for (const a of assets) {
  if (!existsSync(resolve(root, a))) fail(`asset ${a} does not exist`);
}

mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
let result: Bun.BuildOutput;
try {
  result = await Bun.build({
    entrypoints: [entry],
    target: "bun",
    format: "esm", // bytecode with ESM requires compile; top-level await needs ESM
    bytecode,
    minify: { whitespace: true, syntax: true }, // not identifiers: Elysia relies on function names
    // With compile the map is embedded in the binary (stack traces show src/... lines);
    // Bun also writes <outfile>.map next to it, which is not needed at run time.
    sourcemap: sourcemap ? "linked" : "none",
    define: { SERVICE_BUILD_VERSION: JSON.stringify(pkg.version) },
    plugins,
    throw: false,
    compile: {
      ...(target ? { target } : {}),
      outfile,
      assets: assets.map((a) => resolve(root, a)),
      // The binary must not pick up the .env / bunfig.toml of whatever directory it runs in.
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
} catch (err) {
  console.error("build: Bun.build threw:", err);
  process.exit(1);
}
const seconds = ((performance.now() - started) / 1000).toFixed(2);

if (!result.success) {
  console.error(`build: FAILED after ${seconds}s`);
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
for (const log of result.logs) console.warn(log);

const out = result.outputs.find((o) => o.kind === "entry-point")?.path ?? outfile;
if (!existsSync(out)) fail(`no executable at ${out}`);
const mb = (statSync(out).size / 1024 / 1024).toFixed(1);
console.log(
  `build: ${out} (${mb} MB, v${pkg.version}, ${target ?? `${process.platform}-${process.arch}`}, ` +
    `bytecode ${bytecode ? "on" : "off"}, sourcemap ${sourcemap ? "on" : "off"}, ${libsqlPackage}) in ${seconds}s`,
);
