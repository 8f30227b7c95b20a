// Extension folders for tests: a WebAssembly extension built from WAT at test time, an
// extension bundling a small stdio MCP server, and a service started with them installed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, servicePaths, type Env } from "../../src/config/load";
import { installExtension } from "../../src/extensions/installed";
import { startTestService, type TestService } from "../support/harness";
import { testModuleWat, wat2wasm } from "./wat";

export const MODEL = "test-model";
export const MCP_FIXTURE = resolve(import.meta.dir, "fixtures/key-server.ts");

const empty = { type: "object", properties: {} };

/** A temp dir removed by the returned `cleanup`. */
export function tempDir(prefix = "ext-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface WasmExtensionOptions {
  name?: string;
  urls?: Record<string, string>;
  allow?: string[];
  limits?: { timeoutMs?: number; cpuMs?: number; memoryPages?: number };
  credentials?: unknown;
  growPages?: number;
  memoryMin?: number;
  /** Replaces the compiled module (a broken one, say). */
  moduleBytes?: Uint8Array;
}

/** Writes a WebAssembly extension folder (extension.json + tool.wasm) under `parent`; returns its path. */
export function writeWasmExtension(parent: string, o: WasmExtensionOptions = {}): string {
  const name = o.name ?? "wasmtest";
  const dir = join(parent, `src-${name}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir, { recursive: true });
  const bytes = o.moduleBytes ?? wat2wasm(testModuleWat({ urls: o.urls, growPages: o.growPages, memoryMin: o.memoryMin }));
  writeFileSync(join(dir, "tool.wasm"), bytes);
  const tools = [
    { name: "echo", description: "Returns its arguments", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
    { name: "spin", description: "Never returns", parameters: empty },
    { name: "grow", description: "Grows its memory", parameters: empty },
    ...Object.keys(o.urls ?? {}).map((k) => ({ name: `fetch_${k}`, description: `Fetches ${k}`, parameters: empty })),
  ];
  const manifest = {
    name,
    version: "1.2.3",
    description: "A WebAssembly test extension",
    tools,
    runtime: { type: "wasm", module: "tool.wasm", network: { allow: o.allow ?? [] }, limits: o.limits ?? { timeoutMs: 5_000, memoryPages: 16 } },
    ...(o.credentials === undefined ? {} : { credentials: o.credentials }),
  };
  writeFileSync(join(dir, "extension.json"), JSON.stringify(manifest, null, 2));
  return dir;
}

/** Writes an extension folder bundling the key-server MCP fixture; returns its path. */
export function writeMcpExtension(parent: string, o: { name?: string; credentials?: unknown } = {}): string {
  const name = o.name ?? "mcptest";
  const dir = join(parent, `src-${name}`);
  mkdirSync(dir, { recursive: true });
  const manifest = {
    name,
    version: "0.1.0",
    description: "An extension bundling an MCP server",
    tools: [
      { name: "add", description: "Adds two integers", parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] } },
      { name: "reveal_key", description: "Says what its key is (a leaky tool)", parameters: empty },
      { name: "where", description: "The server's working directory", parameters: empty },
    ],
    runtime: { type: "mcp", command: process.execPath, args: [MCP_FIXTURE], env: { GREETING: "hello" } },
    ...(o.credentials === undefined ? {} : { credentials: o.credentials }),
  };
  writeFileSync(join(dir, "extension.json"), JSON.stringify(manifest, null, 2));
  return dir;
}

/**
 * The tests' web is on loopback, which an operator lets extensions reach by naming it in
 * tools.web.allowHosts; a test of the guard itself sets WEB_FETCH_ALLOW_HOSTS to "".
 */
export const LOOPBACK_ALLOWED: Env = { WEB_FETCH_ALLOW_HOSTS: "127.0.0.1" };

/**
 * Starts the service on a fresh home with these extension folders installed (as the CLI
 * does, with the same configuration); `before` runs against the home first (to store a key, say).
 */
export async function startWithExtensions(sources: string[], opts: { env?: Env; before?: (home: string) => Promise<void> } = {}): Promise<TestService> {
  const { dir, cleanup } = tempDir("service-ext-");
  const home = join(dir, "home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const env = { ...LOOPBACK_ALLOWED, ...opts.env };
  const access = loadConfig(servicePaths({ SERVICE_HOME: home }), env).tools.web;
  for (const source of sources) installExtension(home, source, { access });
  await opts.before?.(home);
  const t = await startTestService({ keepHome: home, env });
  const stop = t.stop;
  t.stop = async () => {
    await stop();
    cleanup();
  };
  return t;
}

/** The tool messages the model was sent in its last request. */
export function toolMessages(t: TestService): any[] {
  return t.llm.lastChat().messages.filter((m: any) => m.role === "tool");
}

/** Everything the model was ever sent, as one string. */
export const allLlmText = (t: TestService) => JSON.stringify(t.llm.chatRequests().map((r) => r.body));

/** A loopback HTTP server that records the requests it gets. */
export function recordingServer(handler: (req: Request) => Response | Promise<Response>) {
  const seen: { url: string; headers: Record<string, string> }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      seen.push({ url: req.url, headers: Object.fromEntries(req.headers) });
      return handler(req);
    },
  });
  return { server, seen, origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export { chatEvents } from "../support/chat-events";
