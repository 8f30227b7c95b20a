#!/usr/bin/env bun
/**
 * Compiles src/main.ts into one self-contained executable: dist/service.
 *
 *   bun run build                       # src/main.ts -> dist/service (this platform)
 *   bun run build.ts --entry x.ts --outfile /tmp/x   # other entry (scratch checks)
 *   bun run build.ts --target bun-linux-arm64        # cross-compile (needs that platform's
 *                                                    # @libsql package: installed, or --libsql-dir)
 *   bun run build:release                            # every release binary (scripts/build-release.ts)
 *   bun run build.ts --no-bytecode                   # plain JS in the binary (slower start)
 *   bun run build.ts --no-sourcemap                  # stack traces point into the bundle
 */
import type { BunPlugin } from "bun";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeWebUi } from "./src/gateway/web-bundle";
import { gitCommit } from "./src/version";

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
      "libsql-dir": { type: "string" }, // the target's @libsql/<platform> package, when not in node_modules
      "no-bytecode": { type: "boolean", default: false },
      "no-sourcemap": { type: "boolean", default: false },
    },
    strict: true,
  });
} catch (err) {
  fail(`${(err as Error).message}\nusage: bun run build.ts [--entry src/main.ts] [--outfile dist/service] [--target bun-linux-x64] [--libsql-dir DIR] [--no-bytecode] [--no-sourcemap]`);
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
function libsqlNativePlugin(platformPackage: string, packageDir: string): BunPlugin {
  return {
    name: "libsql-native",
    setup(build) {
      // the addon of the platform built for, wherever it was installed
      const main = (JSON.parse(readFileSync(resolve(packageDir, "package.json"), "utf8")) as { main?: string }).main ?? "index.node";
      build.onResolve({ filter: new RegExp(`^${platformPackage.replace("/", "\\/")}$`) }, () => ({ path: resolve(packageDir, main) }));
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
const libsqlDir = resolve(args["libsql-dir"] ?? resolve(root, "node_modules", libsqlPackage));
if (!existsSync(resolve(libsqlDir, "package.json"))) {
  fail(`${libsqlPackage} is not at ${libsqlDir}; run bun install on/for that platform, or pass --libsql-dir (bun run build:release fetches it)`);
}

/**
 * blessed (the TUI) in a compiled binary. lib/widget.js requires each widget through a
 * computed path ('./widgets/' + file) the bundler cannot follow: give it literal requires.
 * lib/tput.js falls back to blessed's own terminfo files (it cannot parse Debian's ncurses-6
 * ones) through __dirname, which bundling bakes in as this machine's path: read them from
 * the embedded `usr` asset (see `assets`) instead. The Terminal widget's optional term.js
 * and pty.js stay external: not installed, never loaded (the TUI does not use that widget).
 */
function blessedPlugin(): BunPlugin {
  return {
    name: "blessed",
    setup(build) {
      build.onResolve({ filter: /^(term|pty)\.js$/ }, ({ path }) => ({ path, external: true }));
      build.onLoad({ filter: /[\\/]node_modules[\\/]blessed[\\/]lib[\\/](widget|tput)\.js$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        const expect = (re: RegExp) => {
          if (!re.test(source)) throw new Error(`blessed plugin: ${re} not found in ${path}; blessed changed, update build.ts`);
          return re;
        };
        if (path.endsWith("widget.js")) {
          const files = readdirSync(resolve(dirname(path), "widgets")).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3));
          const cases = files.map((f) => `case ${JSON.stringify(f)}: return require("./widgets/${f}");`).join(" ");
          const load = `function __blessedWidget(file) { switch (file) { ${cases} } throw new Error("blessed: no widget " + file); }\n`;
          return { contents: load + source.replace(expect(/require\('\.\/widgets\/' \+ file\)/), "__blessedWidget(file)"), loader: "js" };
        }
        const usr = `var __blessedUsr = require("fs").existsSync(import.meta.dir + "/usr/xterm") ? import.meta.dir + "/usr" : __dirname + "/../usr";\n`;
        return { contents: usr + source.replace(expect(/__dirname \+ '\/\.\.\/usr\//g), "__blessedUsr + '/"), loader: "js" };
      });
    },
  };
}

/** Add plugins here (blessed's computed requires, ...). */
const plugins: BunPlugin[] = [libsqlNativePlugin(libsqlPackage, libsqlDir), blessedPlugin()];

// The web UI, bundled for the browser first: served by src/gateway/web-ui.ts from /$bunfs/root/webui.
const webFiles = await writeWebUi(resolve(root, "dist/webui"));
console.log(`build: web UI bundled to dist/webui (${webFiles.length} files)`);

/**
 * Files or folders (relative to the repo root) embedded as-is. Each one lands under its
 * BASENAME: "src/web" -> /$bunfs/root/web/..., readable with node:fs / Bun.file at
 * join(import.meta.dir, "web") in the binary (import.meta.dir is "/$bunfs/root" in every module).
 */
const assets: string[] = [
  "dist/webui",
  "node_modules/blessed/usr", // blessed's own terminfo files, for the TUI (see blessedPlugin)
];
for (const a of assets) {
  if (!existsSync(resolve(root, a))) fail(`asset ${a} does not exist`);
}

/** The binary's name for itself (src/version.ts): the commit built and when, so that no two builds look alike. */
const identity = { commit: gitCommit(root) ?? "unknown", date: new Date().toISOString().replace(/\.\d+Z$/, "Z") };

mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
let result: Bun.BuildOutput;
try {
  result = await Bun.build({
    entrypoints: [entry],
    target: "bun",
    format: "esm", // bytecode with ESM requires compile; top-level await needs ESM
    bytecode,
    // Each import() and each require() inside a function is a chunk of its own in the binary,
    // loaded (its bytecode read) when that code first runs: what a command never runs costs
    // it no memory (`serve` idles about 10 MB lower than with one chunk; docs/performance.md).
    splitting: true,
    minify: { whitespace: true, syntax: true }, // not identifiers: Elysia relies on function names
    // With compile the map is embedded in the binary (stack traces show src/... lines);
    // Bun also writes <outfile>.map next to it, which is not needed at run time.
    sourcemap: sourcemap ? "linked" : "none",
    plugins,
    define: { SERVICE_BUILD_COMMIT: JSON.stringify(identity.commit), SERVICE_BUILD_DATE: JSON.stringify(identity.date) },
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
  `build: ${out} (${mb} MB, v${pkg.version}, commit ${identity.commit}, ${target ?? `${process.platform}-${process.arch}`}, ` +
    `bytecode ${bytecode ? "on" : "off"}, sourcemap ${sourcemap ? "on" : "off"}, ${libsqlPackage}) in ${seconds}s`,
);
