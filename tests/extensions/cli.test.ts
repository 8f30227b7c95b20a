// `service extension ...` as a user runs it: real processes on a temp service home.
import { afterAll, beforeAll, describe, expect, test as bunTest } from "bun:test";
import { createClient } from "@libsql/client";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startTestService } from "../support/harness";
import { tempDir, writeWasmExtension } from "./support";

/** Every test spawns real processes; a cold start on a loaded machine can take a while. */
const test = (name: string, fn: () => Promise<void>) => bunTest(name, fn, 30_000);

const ROOT = resolve(import.meta.dir, "../..");
const KEY = "ck-secret-key-0123456789-abcdefghij";

let tmp: ReturnType<typeof tempDir>;
let home: string;
let source: string;

async function cli(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([process.execPath, "src/main.ts", "extension", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: tmp.dir, SERVICE_HOME: home, NO_COLOR: "1" },
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

beforeAll(() => {
  tmp = tempDir("ext-cli-");
  home = join(tmp.dir, "home");
  source = writeWasmExtension(tmp.dir, { credentials: { type: "api_key", name: "Weather API key", header: "X-Api-Key" } });
});
afterAll(() => tmp.cleanup());

describe("service extension: usage", () => {
  test("--help on the command and on every subcommand; wrong usage exits 2", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const c of ["install <path>", "list", "remove <name>", "enable <name>", "disable <name>", "set-key <name>"]) expect(help.out).toContain(c);
    // run side by side: each is a cold start of its own
    const subs = ["install", "list", "remove", "enable", "disable", "set-key"];
    for (const [i, r] of (await Promise.all(subs.map((sub) => cli([sub, "--help"])))).entries()) {
      expect(r.code).toBe(0);
      expect(r.out).toStartWith(`Usage: service extension ${subs[i]}`);
    }
    const wrongs = [[], ["bogus"], ["install"], ["install", "a", "b"], ["list", "extra"], ["list", "--bogus"], ["enable"], ["remove", "--force", "x"]];
    for (const r of await Promise.all(wrongs.map((w) => cli(w)))) {
      expect(r.code).toBe(2);
      expect(r.err).toContain("Usage: service extension");
    }
    // the top-level help names the command
    const top = Bun.spawnSync([process.execPath, "src/main.ts", "--help"], { cwd: ROOT });
    expect(top.stdout.toString()).toContain("service extension <command>");
  });
});

describe("service extension: install, list, set-key, disable, enable, remove", () => {
  test("install checks the folder and copies it in, enabled", async () => {
    const r = await cli(["install", source]);
    // its key is bound to no host: installed, with a warning that it is sent nowhere
    expect(r.err).toBe(
      'service: warning: credentials.hosts is not set, so its API key is sent to no host; list the hosts it is for in extension.json, e.g. "hosts": ["api.example.com"]\n',
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain("installed wasmtest 1.2.3: ext__wasmtest__echo, ext__wasmtest__spin, ext__wasmtest__grow");
    expect(r.out).toContain("service extension set-key wasmtest");
    expect(r.out).toContain("restart `service serve`");
    const dir = join(home, "extensions", "wasmtest");
    expect(readFileSync(join(dir, "tool.wasm"))).toEqual(readFileSync(join(source, "tool.wasm")));
    expect(JSON.parse(readFileSync(join(dir, "extension.json"), "utf8")).name).toBe("wasmtest");
    expect(JSON.parse(readFileSync(join(home, "extensions", "state.json"), "utf8"))).toEqual({ wasmtest: { enabled: true } });

    const again = await cli(["install", source]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("already installed");
    const forced = await cli(["install", "--force", source]);
    expect(forced.code).toBe(0);
    expect(forced.out).toContain("replaced wasmtest");
  });

  test("a broken manifest is refused with what is wrong, and nothing is copied", async () => {
    const bad = writeWasmExtension(tmp.dir, { name: "broken" });
    const manifest = JSON.parse(readFileSync(join(bad, "extension.json"), "utf8"));
    writeFileSync(join(bad, "extension.json"), JSON.stringify({ ...manifest, name: "Not A Name" }));
    const r = await cli(["install", bad]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("name must be 1 to 32 characters");
    writeFileSync(join(bad, "extension.json"), JSON.stringify({ ...manifest, runtime: { type: "wasm", module: "tool.wasm", limits: { memoryPages: "lots" } } }));
    const r2 = await cli(["install", bad]);
    expect(r2.code).toBe(1);
    expect(r2.err).toContain("runtime.limits.memoryPages");
    expect((await cli(["install", join(tmp.dir, "nowhere")])).err).toContain("is not a folder");
    expect(existsSync(join(home, "extensions", "broken"))).toBe(false);
    expect(existsSync(join(home, "extensions", "Not A Name"))).toBe(false);
  });

  test("an allow list over a public suffix, loopback or metadata is refused naming the entry; config.json can let a loopback host through", async () => {
    const refused: [string, string][] = [
      ["*", `"*" is a bare wildcard`],
      ["*.com", `"*.com" is a wildcard over the public suffix com`],
      ["*.co.uk", `"*.co.uk" is a wildcard over the public suffix co.uk`],
      ["localhost:8080", `"localhost:8080" is a loopback address`],
      ["127.0.0.1", `"127.0.0.1" is a loopback address`],
      ["169.254.169.254", `"169.254.169.254" is a cloud metadata service`],
      ["metadata.google.internal", `"metadata.google.internal" is a cloud metadata service`],
    ];
    const results = await Promise.all(
      refused.map(([entry]) => cli(["install", writeWasmExtension(tmp.dir, { name: "wide", allow: ["api.example.com", entry] })])),
    );
    for (const [i, r] of results.entries()) {
      expect(r.code).toBe(1);
      expect(r.err).toStartWith(`service: cannot install `);
      expect(r.err).toContain(`runtime.network.allow: ${refused[i]![1]}`);
    }
    expect(existsSync(join(home, "extensions", "wide"))).toBe(false);

    const lan = writeWasmExtension(tmp.dir, { name: "lan", allow: ["127.0.0.1:8123"] });
    writeFileSync(join(home, "config.json"), JSON.stringify({ tools: { web: { allowHosts: ["127.0.0.1"] } } }));
    try {
      const r = await cli(["install", lan]);
      expect(r.err).toBe("");
      expect(r.out).toContain("installed lan 1.2.3");
      expect((await cli(["list"])).out).toMatch(/lan\s+1\.2\.3\s+enabled/);
    } finally {
      rmSync(join(home, "config.json"));
    }
    // without the operator's word the installed copy no longer loads: listed as broken, with why
    const listed = await cli(["list"]);
    expect(listed.out).toMatch(/lan\s+-\s+broken/);
    expect(listed.out).toContain(`"127.0.0.1:8123" is a loopback address: an extension reaches it only if an operator lists 127.0.0.1 in tools.web.allowHosts`);
    const t = await startTestService({ keepHome: home });
    try {
      expect(t.service.services.tools.get("ext__lan__echo")).toBeUndefined();
      expect(t.logs.join("\n")).toContain(`extension lan: not loaded: `);
      const list = (await (await t.api("/api/extensions")).json()) as any;
      const lan = list.extensions.find((e: any) => e.name === "lan");
      expect(lan.state).toBe("error");
      expect(lan.error).toContain(`"127.0.0.1:8123" is a loopback address`);
    } finally {
      await t.stop();
    }
    expect((await cli(["remove", "lan"])).code).toBe(0);
  });

  test("list shows each extension's state, runtime, credentials and tools", async () => {
    const r = await cli(["list"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^NAME\s+VERSION\s+STATE\s+RUNTIME\s+CREDENTIALS\s+TOOLS\n/);
    expect(r.out).toMatch(/wasmtest\s+1\.2\.3\s+enabled\s+wasm\s+api_key \(not set\)\s+ext__wasmtest__echo/);
    const json = JSON.parse((await cli(["list", "--json"])).out);
    expect(json).toEqual([
      expect.objectContaining({ name: "wasmtest", version: "1.2.3", enabled: true, runtime: "wasm", credentials: "api_key", key_set: false, error: null }),
    ]);
  });

  test("set-key reads the key from stdin and stores it encrypted", async () => {
    const r = await cli(["set-key", "wasmtest"], `${KEY}\n`);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("stored the Weather API key of wasmtest, encrypted");
    expect(r.out).not.toContain(KEY);
    expect((await cli(["list"])).out).toContain("api_key (set)");
    const client = createClient({ url: `file:${join(home, "service.db")}` });
    try {
      const row = (await client.execute("SELECT secret FROM extension_credentials WHERE extension = 'wasmtest'")).rows[0]!;
      expect(String(row.secret)).toStartWith("v1:");
      expect(String(row.secret)).not.toContain(KEY);
    } finally {
      client.close();
    }
    expect(statSync(join(home, "secret.key")).mode & 0o777).toBe(0o600);
    expect((await cli(["set-key", "wasmtest"], "")).code).toBe(1);
    expect((await cli(["set-key", "nosuch"], KEY)).err).toContain("no extension named nosuch");
  });

  test("disable and enable: serve loads only enabled extensions, with the stored key", async () => {
    const off = await cli(["disable", "wasmtest"]);
    expect(off.code).toBe(0);
    expect(off.out).toContain("disabled wasmtest");
    expect((await cli(["list"])).out).toMatch(/wasmtest\s+1\.2\.3\s+disabled/);
    let t = await startTestService({ keepHome: home });
    try {
      expect(t.service.services.tools.get("ext__wasmtest__echo")).toBeUndefined();
      const list = (await (await t.api("/api/extensions")).json()) as any;
      expect(list.extensions[0]).toMatchObject({ name: "wasmtest", enabled: false, state: "disabled" });
    } finally {
      await t.stop();
    }

    expect((await cli(["enable", "wasmtest"])).code).toBe(0);
    t = await startTestService({ keepHome: home });
    try {
      expect(t.service.services.tools.get("ext__wasmtest__echo")).toBeDefined();
      const list = (await (await t.api("/api/extensions")).json()) as any;
      expect(list.extensions[0]).toMatchObject({ enabled: true, state: "loaded", authorized: true });
      // the key set by the CLI is known to the safety layer from the start
      expect(t.service.services.agent.deps.safety.redact(`key=${KEY}`)).not.toContain(KEY);
    } finally {
      await t.stop();
    }
    expect((await cli(["enable", "nosuch"])).code).toBe(1);
  });

  test("remove deletes the folder, its state and its credentials", async () => {
    const r = await cli(["remove", "wasmtest"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("removed wasmtest");
    expect(existsSync(join(home, "extensions", "wasmtest"))).toBe(false);
    expect(JSON.parse(readFileSync(join(home, "extensions", "state.json"), "utf8"))).toEqual({});
    const client = createClient({ url: `file:${join(home, "service.db")}` });
    try {
      expect((await client.execute("SELECT count(*) AS n FROM extension_credentials")).rows[0]!.n).toBe(0);
    } finally {
      client.close();
    }
    expect((await cli(["list"])).out).toContain("no extensions installed");
    const again = await cli(["remove", "wasmtest"]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("no extension named wasmtest is installed");
  });
});
