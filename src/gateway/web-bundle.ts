import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** One file of the browser bundle, by its URL path ("/index.html", "/assets/main-1a2b3c.js"). */
export interface WebFile {
  path: string;
  bytes: Uint8Array;
}

/** The web UI's source: an HTML entry point whose scripts and styles Bun bundles for the browser. */
export const WEB_SOURCE = join(import.meta.dir, "..", "web", "index.html");

/**
 * Bundles the web UI for the browser: index.html plus content-hashed files under /assets/.
 * build.ts writes the result to dist/webui (embedded in the binary); under `bun run` and in
 * tests the gateway calls this once in memory.
 */
export async function bundleWebUi(): Promise<WebFile[]> {
  const result = await Bun.build({
    entrypoints: [WEB_SOURCE],
    target: "browser",
    minify: true,
    sourcemap: "none",
    publicPath: "/",
    // pages that load a library of their own (the Usage page's charts) load it when opened
    splitting: true,
    naming: { entry: "[name].[ext]", chunk: "assets/[name]-[hash].[ext]", asset: "assets/[name]-[hash].[ext]" },
    throw: false,
  });
  if (!result.success) {
    throw new Error(`the web UI did not bundle:\n${result.logs.map(String).join("\n")}`);
  }
  return Promise.all(
    result.outputs.map(async (o) => {
      const path = o.path.replace(/^\.\//, "/");
      return { path, bytes: new Uint8Array(await o.arrayBuffer()) };
    }),
  );
}

/** Writes the bundle to `dir` (emptied first), for build.ts to embed. */
export async function writeWebUi(dir: string): Promise<WebFile[]> {
  const files = await bundleWebUi();
  rmSync(dir, { recursive: true, force: true });
  for (const f of files) {
    const target = join(dir, f.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.bytes);
  }
  return files;
}
