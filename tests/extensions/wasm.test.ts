// A WebAssembly extension through the agent loop: the model's tool call runs the module in
// the sandbox, its network allowlist and the private-address guard, its time, CPU and memory
// limits, and its API key (injected by the host for its bound host only, encrypted at rest,
// never shown to the module or the model).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { installExtension } from "../../src/extensions/installed";
import type { TestService } from "../support/harness";
import { wat2wasm } from "./wat";
import { allLlmText, MODEL, recordingServer, startWithExtensions, tempDir, toolMessages, writeWasmExtension } from "./support";

const KEY = "wk-test-0123456789abcdefghijklmnop";
const TIMEOUT_MS = 1_500;
const CPU_MS = 1_000;

describe("a WebAssembly extension with an API key", () => {
  let t: TestService;
  let api: ReturnType<typeof recordingServer>;
  let other: ReturnType<typeof recordingServer>;
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    tmp = tempDir();
    api = recordingServer((req) => {
      const url = new URL(req.url);
      if (url.pathname === "/redirect") return new Response(null, { status: 302, headers: { location: `http://localhost:${url.port}/weather` } });
      if (url.pathname === "/echo") return Response.json({ headers: Object.fromEntries(req.headers) });
      return new Response(`sunny (key ${req.headers.get("x-api-key") === KEY ? "accepted" : "missing"})`);
    });
    // another host the module may reach, which the key is not for: it echoes what it gets
    other = recordingServer((req) => Response.json({ headers: Object.fromEntries(req.headers) }));
    const port = api.server.port;
    const source = writeWasmExtension(tmp.dir, {
      urls: {
        allowed: `${api.origin}/weather`,
        refused: `http://localhost:${port}/weather`,
        redirect: `${api.origin}/redirect`,
        echo: `${api.origin}/echo`,
        other: `${other.origin}/echo`,
        lan: "http://10.0.0.1/",
      },
      allow: [`127.0.0.1:${port}`, `127.0.0.1:${other.server.port}`, "10.0.0.1"],
      limits: { timeoutMs: TIMEOUT_MS, memoryPages: 4 },
      credentials: { type: "api_key", name: "Weather API key", header: "X-Api-Key", hosts: [`127.0.0.1:${port}`] },
    });
    const looper = writeWasmExtension(tmp.dir, { name: "looper", limits: { timeoutMs: 120_000, cpuMs: CPU_MS, memoryPages: 4 } });
    t = await startWithExtensions([source, looper]);
  });
  afterAll(async () => {
    await t.stop();
    api.stop();
    other.stop();
    tmp.cleanup();
  });

  /** One turn in which the model calls `tool`; returns the tool's output as the model got it. */
  async function call(tool: string, args: unknown = {}, extension = "wasmtest"): Promise<string> {
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: `ext__${extension}__${tool}`, arguments: args }] }, { text: "Done." });
    const r = await t.respond({ model: MODEL, input: `run ${tool}` });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.output.at(-1).content[0].text).toBe("Done.");
    const tools = toolMessages(t);
    expect(tools).toHaveLength(1);
    return tools[0].content as string;
  }

  test("its tools are listed with their state; without the key they say how to set it", async () => {
    const res = await t.api("/api/extensions");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.extensions.filter((e: any) => e.name === "wasmtest")).toEqual([
      {
        name: "wasmtest",
        version: "1.2.3",
        description: "A WebAssembly test extension",
        enabled: true,
        runtime: "wasm",
        tools: [
          "ext__wasmtest__echo",
          "ext__wasmtest__spin",
          "ext__wasmtest__grow",
          ...["allowed", "refused", "redirect", "echo", "other", "lan"].map((u) => `ext__wasmtest__fetch_${u}`),
        ],
        credentials: "api_key",
        authorized: false,
        state: "loaded",
        error: null,
      },
    ]);
    expect(await call("echo", { text: "hi" })).toContain("needs its Weather API key");
    expect(toolMessages(t)[0].content).toContain("service extension set-key wasmtest");
  });

  test("an API key is set by an admin only, and then counts as authorized", async () => {
    const member = await t.createUser("member");
    const refused = await t.api("/api/extensions/wasmtest/key", { method: "POST", json: { key: KEY }, token: member.token });
    expect(refused.status).toBe(403);
    const bad = await t.api("/api/extensions/wasmtest/key", { method: "POST", json: { nope: 1 } });
    expect(bad.status).toBe(400);
    const unknown = await t.api("/api/extensions/nosuch/key", { method: "POST", json: { key: KEY } });
    expect(unknown.status).toBe(404);
    const ok = await t.api("/api/extensions/wasmtest/key", { method: "POST", json: { key: KEY } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: "wasmtest", authorized: true });
    const list = (await (await t.api("/api/extensions")).json()) as any;
    expect(list.extensions.find((e: any) => e.name === "wasmtest").authorized).toBe(true);
  });

  test("the model's tool call runs the module and its result reaches the model", async () => {
    const output = await call("echo", { text: "hello from the model" });
    expect(output).toContain('{"text":"hello from the model"}');
    expect(output).toContain('tool="ext__wasmtest__echo"');
    // the module's host.log line reaches the service log
    expect(t.logs).toContain('extension wasmtest: {"text":"hello from the model"}');
    // the tool is offered to the model under its registered name, with the manifest's schema
    const offered = t.llm.chatRequests()[0]!.body.tools.find((x: any) => x.function.name === "ext__wasmtest__echo");
    expect(offered.function.parameters.required).toEqual(["text"]);
  });

  test("bad arguments never reach the module", async () => {
    expect(await call("echo", { text: 42 })).toContain("invalid arguments for ext__wasmtest__echo");
  });

  test("extension tool names are registered actions: a caller tool may not take one", async () => {
    const tools = [{ type: "function", name: "ext__wasmtest__echo", parameters: { type: "object", properties: {} } }];
    const r = await t.respond({ model: MODEL, input: "hi", tools });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("ext__wasmtest__echo");
    // the whole prefix is kept for extensions, installed or not
    const other = await t.respond({ model: MODEL, input: "hi", tools: [{ ...tools[0], name: "ext__later__x" }] });
    expect(other.status).toBe(400);
  });

  test("an allow-listed host is served, with the key the host adds; the model never sees the key", async () => {
    const before = api.seen.length;
    const output = await call("fetch_allowed");
    expect(output).toContain('"status":200');
    expect(output).toContain("sunny (key accepted)");
    expect(api.seen.length).toBe(before + 1);
    expect(api.seen.at(-1)!.headers["x-api-key"]).toBe(KEY);
    expect(allLlmText(t)).not.toContain(KEY);
  });

  test("a host that echoes its request gives the module the key hidden; the model never sees it either", async () => {
    const output = await call("fetch_echo");
    expect(api.seen.at(-1)!.headers["x-api-key"]).toBe(KEY);
    // hidden by the host before the module got the reply (the safety layer's mark would read [REDACTED:secret])
    expect(output).toContain('\\"x-api-key\\":\\"[REDACTED:credential]\\"');
    expect(allLlmText(t)).not.toContain(KEY);
  });

  test("a host on the allowlist that the key is not bound to never receives it", async () => {
    const before = other.seen.length;
    const output = await call("fetch_other");
    expect(other.seen.length).toBe(before + 1);
    expect(other.seen.at(-1)!.headers["x-api-key"]).toBeUndefined();
    expect(JSON.stringify(other.seen)).not.toContain(KEY);
    expect(output).toContain('"status":200');
  });

  test("a private address on the allowlist is refused by web_fetch's guard before any connection", async () => {
    expect(await call("fetch_lan")).toContain("refusing to fetch 10.0.0.1: private addresses are blocked");
  });

  test("a host not on the allowlist is refused, and so is a redirect to one", async () => {
    const before = api.seen.length;
    expect(await call("fetch_refused")).toContain(`not on this extension's network allowlist`);
    expect(api.seen.length).toBe(before);
    const redirected = await call("fetch_redirect");
    expect(redirected).toContain(`http://localhost:${api.server.port} is not on this extension's network allowlist`);
    // the first hop (allowed) was made, the redirect target (refused) never was
    expect(api.seen.length).toBe(before + 1);
    expect(api.seen.at(-1)!.url).toEndWith("/redirect");
  });

  test("an infinite loop is stopped at the time limit, and the turn goes on", async () => {
    const started = performance.now();
    const output = await call("spin");
    expect(output).toContain(`did not finish within ${TIMEOUT_MS} ms and was stopped`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 5_000);
  });

  test("an infinite loop is stopped at its CPU time limit long before its wall time; the service keeps answering", async () => {
    const started = performance.now();
    const turn = call("spin", {}, "looper");
    // the loop runs in its own process: the service answers meanwhile
    expect((await t.api("/api/status")).status).toBe(200);
    const output = await turn;
    expect(output).toContain(`Error: ext__looper__spin failed: used its ${CPU_MS / 1000} s of CPU time and was stopped`);
    expect(performance.now() - started).toBeLessThan(60_000);
    // and runs the next call as before
    expect(await call("echo", { text: "still here" }, "looper")).toContain('{"text":"still here"}');
  }, 90_000);

  test("memory cannot grow past the limit", async () => {
    // the module asks for 64 more pages; its limit is 4
    expect(await call("grow")).toContain("refused");
  });

  test("the key is stored encrypted: the database holds ciphertext, never the key", async () => {
    const dbFile = join(t.home, "service.db");
    const client = createClient({ url: `file:${dbFile}` });
    try {
      const rows = (await client.execute("SELECT extension, user_id, kind, secret FROM extension_credentials")).rows;
      expect(rows).toHaveLength(1);
      expect(rows[0]!.kind).toBe("api_key");
      expect(String(rows[0]!.secret)).toStartWith("v1:");
      expect(String(rows[0]!.secret)).not.toContain(KEY);
    } finally {
      client.close();
    }
    for (const file of [dbFile, `${dbFile}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes(Buffer.from(KEY))).toBe(false);
    }
    const keyFile = join(t.home, "secret.key");
    expect(readFileSync(keyFile, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    expect((await Bun.file(keyFile).stat()).mode & 0o777).toBe(0o600);
    // and no log line carries it
    expect(t.logs.join("\n")).not.toContain(KEY);
  });
});

describe("module checks at install", () => {
  test("a module that needs more memory than its limit, defines its own memory or lacks a tool is refused", () => {
    const { dir, cleanup } = tempDir();
    try {
      const home = join(dir, "home");
      const big = writeWasmExtension(dir, { name: "big", memoryMin: 8, limits: { memoryPages: 4 } });
      expect(() => installExtension(home, big)).toThrow("needs 8 pages of memory to start, more than its limit of 4");
      const own = writeWasmExtension(dir, {
        name: "own",
        moduleBytes: wat2wasmOwnMemory(),
      });
      expect(() => installExtension(home, own)).toThrow("defines its own memory; it must import env.memory");
      const junk = writeWasmExtension(dir, { name: "junk", moduleBytes: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) });
      expect(() => installExtension(home, junk)).toThrow("not a valid WebAssembly module");
      expect(existsSync(join(home, "extensions", "big"))).toBe(false);
    } finally {
      cleanup();
    }
  });
});

/** Exports every tool of the test manifest, but keeps a memory of its own. */
function wat2wasmOwnMemory(): Uint8Array {
  const stub = (name: string) => `(func (export "${name}") (param i32 i32) (result i64) (i64.const 0))`;
  return wat2wasm(`(module (memory 1)
    (func (export "alloc") (param i32) (result i32) (i32.const 0))
    ${["echo", "spin", "grow"].map(stub).join("\n")})`);
}
