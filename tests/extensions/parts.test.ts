// The pieces of extensions on their own: manifest checks, the network allowlist, the
// encryption of credentials at rest, and the WebAssembly sandbox run directly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { manifestProblem } from "../../src/extensions/manifest";
import { SecretBox } from "../../src/extensions/secret-box";
import { inspectModule, pack, unpack } from "../../src/extensions/wasm/abi";
import { runWasmTool } from "../../src/extensions/wasm/host";
import { isAllowed } from "../../src/extensions/hosts";
import { tempDir } from "./support";
import { testModuleWat, wat2wasm } from "./wat";

const base = {
  name: "weather",
  version: "1.0.0",
  description: "Forecasts",
  tools: [{ name: "forecast", description: "The forecast", parameters: { type: "object", properties: {} } }],
  runtime: { type: "wasm", module: "tool.wasm", network: { allow: ["api.example.com"] }, limits: { timeoutMs: 1000, memoryPages: 8 } },
};

describe("manifest", () => {
  test("a well-formed manifest passes, with every kind of runtime and credentials", () => {
    expect(manifestProblem(base)).toBeUndefined();
    expect(manifestProblem({ ...base, credentials: "none" })).toBeUndefined();
    expect(manifestProblem({ ...base, credentials: { type: "api_key", name: "key", query: "appid" } })).toBeUndefined();
    expect(
      manifestProblem({ ...base, credentials: { type: "oauth2", authorizeUrl: "https://a.example/auth", tokenUrl: "https://a.example/token", clientId: "c", scopes: ["read"] } }),
    ).toBeUndefined();
    expect(
      manifestProblem({ ...base, runtime: { type: "mcp", command: "node", args: ["server.js"], env: { A: "b" } }, credentials: { type: "api_key", name: "key", env: "API_KEY" } }),
    ).toBeUndefined();
  });

  test("problems are named so an operator can fix them", () => {
    const cases: [unknown, string][] = [
      [{ ...base, name: "Weather" }, "name must be 1 to 32 characters"],
      [{ ...base, name: "a".repeat(33) }, "name must be 1 to 32 characters"],
      [{ ...base, version: "" }, "version"],
      [{ ...base, tools: [] }, "tools"],
      [{ ...base, tools: [{ ...base.tools[0], name: "bad name" }] }, "tools.0.name"],
      [{ ...base, tools: [base.tools[0], base.tools[0]] }, "forecast is listed twice"],
      [{ ...base, name: "a".repeat(32), tools: [{ ...base.tools[0], name: "b".repeat(30) }] }, "longer than 64 characters"],
      [{ ...base, tools: [{ ...base.tools[0], parameters: { type: "string" } }] }, "tools.0.parameters.type"],
      [{ ...base, runtime: { type: "docker" } }, 'runtime.type must be "mcp" or "wasm"'],
      [{ ...base, runtime: { type: "mcp" } }, "runtime"],
      [{ ...base, runtime: { ...base.runtime, module: "../outside.wasm" } }, "inside the extension's folder"],
      [{ ...base, runtime: { ...base.runtime, network: { allow: ["https://api.example.com/path"] } } }, "is not a host name"],
      [{ ...base, runtime: { ...base.runtime, limits: { memoryPages: 0 } } }, "runtime.limits.memoryPages"],
      [{ ...base, credentials: { type: "password" } }, 'credentials.type must be "none", "api_key" or "oauth2"'],
      [{ ...base, credentials: { type: "api_key" } }, "credentials.name"],
      [{ ...base, credentials: { type: "api_key", name: "k", header: "X-Key", query: "k" } }, "header or query, not both"],
      [{ ...base, runtime: { type: "mcp", command: "node" }, credentials: { type: "api_key", name: "k" } }, "credentials.env is needed"],
      [{ ...base, credentials: { type: "oauth2", authorizeUrl: "ftp://x", tokenUrl: "https://x/t", clientId: "c", scopes: [] } }, "authorizeUrl must be an http"],
      [
        { ...base, runtime: { type: "mcp", command: "node" }, credentials: { type: "oauth2", authorizeUrl: "https://x/a", tokenUrl: "https://x/t", clientId: "c", scopes: [] } },
        "oauth2 needs a wasm runtime",
      ],
      ["[]", "must hold a JSON object"],
    ];
    for (const [manifest, problem] of cases) expect(manifestProblem(manifest)).toContain(problem);
  });
});

describe("network allowlist", () => {
  const allow = ["api.example.com", "*.cdn.example.org", "127.0.0.1:8080", "[::1]:9000", "plain.example.net:80"];
  test.each([
    ["https://api.example.com/v1", true],
    ["http://api.example.com:8443/v1", true],
    ["https://API.EXAMPLE.COM/", true],
    ["https://evil.com/?api.example.com", false],
    ["https://api.example.com.evil.com/", false],
    ["https://x.cdn.example.org/a", true],
    ["https://a.b.cdn.example.org/a", true],
    ["https://cdn.example.org/a", false],
    ["http://127.0.0.1:8080/", true],
    ["http://127.0.0.1:8081/", false],
    ["http://localhost:8080/", false],
    ["http://[::1]:9000/", true],
    ["http://plain.example.net/", true],
    ["https://plain.example.net/", false],
    ["ftp://api.example.com/", false],
    ["file:///etc/passwd", false],
  ])("%s → %p", (url, allowed) => {
    expect(isAllowed(new URL(url), allow)).toBe(allowed);
  });
});

describe("secret box", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => (tmp = tempDir()));
  afterAll(() => tmp.cleanup());

  test("AES-256-GCM with a 0600 key file in the home; bound to its row; tamper-evident", () => {
    const box = SecretBox.forHome(tmp.dir);
    const file = join(tmp.dir, "secret.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const sealed = box.seal("the key", "weather\0\0api_key");
    expect(sealed).toStartWith("v1:");
    expect(sealed).not.toContain("the key");
    expect(box.seal("the key", "weather\0\0api_key")).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed, "weather\0\0api_key")).toBe("the key");
    // the same file gives the same key
    expect(SecretBox.forHome(tmp.dir).open(sealed, "weather\0\0api_key")).toBe("the key");
    expect(() => box.open(sealed, "other\0\0api_key")).toThrow();
    const raw = Buffer.from(sealed.slice(3), "base64");
    raw[raw.length - 1]! ^= 1;
    expect(() => box.open(`v1:${raw.toString("base64")}`, "weather\0\0api_key")).toThrow();
    writeFileSync(file, "0".repeat(64));
    expect(() => SecretBox.forHome(tmp.dir).open(sealed, "weather\0\0api_key")).toThrow();
    expect(readFileSync(file, "utf8")).toBe("0".repeat(64));
  });
});

describe("WebAssembly sandbox", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => (tmp = tempDir()));
  afterAll(() => tmp.cleanup());

  function moduleFile(growPages: number): { path: string; bytes: Uint8Array } {
    const bytes = wat2wasm(testModuleWat({ growPages }));
    const path = join(tmp.dir, `grow-${growPages}.wasm`);
    writeFileSync(path, bytes);
    return { path, bytes };
  }

  const run = (path: string, tool: string, maxPages: number, extra: Partial<Parameters<typeof runWasmTool>[0]> = {}) =>
    runWasmTool({
      module: path,
      tool,
      args: {},
      minPages: 1,
      maxPages,
      timeoutMs: 5_000,
      cpuMs: 5_000,
      network: { allow: [], access: { allowPrivate: false, allowHosts: [] } },
      signal: new AbortController().signal,
      log: () => {},
      ...extra,
    });

  test("memory grows up to the limit and no further", async () => {
    const { path, bytes } = moduleFile(3);
    expect(inspectModule(bytes, ["echo", "grow"], 4)).toEqual({ minPages: 1, maxPages: 4 });
    expect(await run(path, "grow", 4)).toBe("grew"); // 1 + 3 = 4 pages
    expect(await run(path, "grow", 3)).toBe("refused"); // 1 + 3 > 3
  });

  test("a cancelled turn stops the call at once", async () => {
    const { path } = moduleFile(1);
    const controller = new AbortController();
    const started = performance.now();
    const call = run(path, "spin", 4, { signal: controller.signal, timeoutMs: 60_000 });
    setTimeout(() => controller.abort(new Error("the turn was cancelled")), 200);
    await expect(call).rejects.toThrow("the turn was cancelled");
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test("results are packed as pointer << 32 | length", () => {
    expect(unpack(pack(0x12345678, 0x9abcdef0))).toEqual({ ptr: 0x12345678, len: 0x9abcdef0 });
    expect(unpack(-1n)).toEqual({ ptr: 0xffffffff, len: 0xffffffff });
  });
});
