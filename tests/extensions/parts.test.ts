// The pieces of extensions on their own: manifest checks, the network allowlist, the
// encryption of credentials at rest, and the WebAssembly sandbox run directly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allowEntryProblem, STRICT_ACCESS } from "../../src/extensions/hosts";
import { manifestProblem, manifestWarnings, type Manifest } from "../../src/extensions/manifest";
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
      [
        { ...base, runtime: { ...base.runtime, limits: { memoryPages: 65_536 } } },
        "runtime.limits.memoryPages: 65536 pages (4 GiB) is more than an extension may have: at most 16384 pages (1 GiB), default 4096 (256 MiB)",
      ],
      [{ ...base, runtime: { ...base.runtime, limits: { cpuMs: 120_000 } } }, "runtime.limits.cpuMs: 120000 ms is more CPU time than an extension may have: at most 60000 ms a call"],
      [{ ...base, runtime: { ...base.runtime, limits: { cpuMs: 0 } } }, "runtime.limits.cpuMs"],
      [{ ...base, runtime: { ...base.runtime, network: { allow: ["*.com"] } } }, `runtime.network.allow: "*.com" is a wildcard over the public suffix com`],
      [{ ...base, credentials: { type: "api_key", name: "k", hosts: ["other.example.com"] } }, `credentials.hosts: "other.example.com" is not on runtime.network.allow`],
      [
        { ...base, runtime: { type: "mcp", command: "node" }, credentials: { type: "api_key", name: "k", env: "K", hosts: ["api.example.com"] } },
        "credentials.hosts is for wasm runtimes",
      ],
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

  test("the limits may go up to 60 s of CPU and 1 GiB of memory", () => {
    expect(manifestProblem({ ...base, runtime: { ...base.runtime, limits: { cpuMs: 60_000, memoryPages: 16_384 } } })).toBeUndefined();
  });

  test("a credential is bound to hosts on the allow list; one bound to none is installed with a warning", () => {
    const key = { type: "api_key", name: "key", header: "X-Key" };
    const wide = { ...base, runtime: { ...base.runtime, network: { allow: ["api.example.com", "*.cdn.example.org", "127.0.0.1:8080"] } } };
    for (const hosts of [["api.example.com"], ["x.cdn.example.org", "*.cdn.example.org", "*.a.cdn.example.org"], ["127.0.0.1:8080"]]) {
      const m = { ...wide, credentials: { ...key, hosts } };
      expect(manifestProblem(m, { allowPrivate: false, allowHosts: ["127.0.0.1"] })).toBeUndefined();
      expect(manifestWarnings(m as Manifest)).toEqual([]);
    }
    for (const hosts of [["*.example.org"], ["127.0.0.1:9090"], ["https://api.example.com"]]) {
      expect(manifestProblem({ ...wide, credentials: { ...key, hosts } }, { allowPrivate: false, allowHosts: ["127.0.0.1"] })).toContain("credentials.hosts");
    }
    expect(manifestWarnings({ ...base, credentials: key } as Manifest)).toEqual([
      'credentials.hosts is not set, so its API key is sent to no host; list the hosts it is for in extension.json, e.g. "hosts": ["api.example.com"]',
    ]);
    const oauth = { type: "oauth2", authorizeUrl: "https://a.example/auth", tokenUrl: "https://a.example/token", clientId: "c", scopes: [] };
    expect(manifestWarnings({ ...base, credentials: oauth } as Manifest)[0]).toContain("its OAuth access token is sent to no host");
    // an MCP server gets its key in env: nothing to bind
    expect(manifestWarnings({ ...base, runtime: { type: "mcp", command: "node" }, credentials: { ...key, env: "K" } } as Manifest)).toEqual([]);
  });
});

describe("allow list entries at install", () => {
  test.each([
    ["*", "is a bare wildcard"],
    ["*.", "is a bare wildcard"],
    ["*.com", "is a wildcard over the public suffix com"],
    ["*.co.uk", "is a wildcard over the public suffix co.uk"],
    ["*.github.io", "is a wildcard over the public suffix github.io"],
    ["*.lan", "is a wildcard over the public suffix lan"],
    ["*.example.com:443", "is a wildcard with a port"],
    ["*.10.0.0.1", "is a wildcard over an address"],
    ["*.localhost", "covers localhost"],
    ["*.google.internal", "covers metadata.google.internal"],
    ["*.ec2.internal", "covers instance-data.ec2.internal"],
    ["localhost", "is a loopback address"],
    ["LOCALHOST:8080", "is a loopback address"],
    ["app.localhost", "is a loopback address"],
    ["127.0.0.1", "is a loopback address"],
    ["127.1:9000", "is a loopback address"],
    ["[::1]:9000", "is a loopback address"],
    ["[::ffff:127.0.0.1]", "is an IPv4-mapped loopback address"],
    ["0.0.0.0", "is an unspecified address"],
    ["169.254.10.1", "is a link-local address"],
    ["[fe80::1]", "is a link-local address"],
    ["169.254.169.254", "is a cloud metadata service"],
    ["metadata.google.internal", "is a cloud metadata service"],
    ["metadata", "is a cloud metadata service"],
    ["[fd00:ec2::254]", "is a cloud metadata service"],
    ["100.100.100.200", "is a cloud metadata service"],
    ["https://api.example.com", "is not a host name"],
  ])("%s is refused: %s", (entry, problem) => {
    expect(allowEntryProblem(entry, STRICT_ACCESS)).toContain(problem);
  });

  test.each(["api.example.com", "*.example.com", "*.cdn.example.co.uk", "x.github.io", "api.example.com:8443", "10.0.0.1", "nas.lan", "[2001:db8::1]:8080", "93.184.216.34"])(
    "%s is accepted",
    (entry) => {
      expect(allowEntryProblem(entry, STRICT_ACCESS)).toBeUndefined();
    },
  );

  test("a loopback or link-local host the operator lists in tools.web.allowHosts is let through; metadata never", () => {
    const access = { allowPrivate: false, allowHosts: ["127.0.0.1", "LOCALHOST", "169.254.169.254"] };
    expect(allowEntryProblem("127.0.0.1:8080", access)).toBeUndefined();
    expect(allowEntryProblem("localhost", access)).toBeUndefined();
    expect(allowEntryProblem("[::1]", access)).toContain("allowHosts");
    expect(allowEntryProblem("169.254.169.254", access)).toContain("is a cloud metadata service");
    // allowPrivate is for fetching, not for naming this machine in an allow list
    expect(allowEntryProblem("127.0.0.1", { allowPrivate: true, allowHosts: [] })).toContain("is a loopback address");
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

  test("an infinite loop is stopped at its CPU time, long before its wall time", async () => {
    const { path } = moduleFile(1);
    const started = performance.now();
    await expect(run(path, "spin", 4, { cpuMs: 500, timeoutMs: 60_000 })).rejects.toThrow("used its 0.5 s of CPU time and was stopped");
    // on a busy machine CPU time runs slower than the clock, but nowhere near the wall limit
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 60_000);

  test("memory the module holds outside its linear memory (tables) counts too", async () => {
    // three tables grown to ten million entries each: some 240 MiB the memory limit does not see
    const path = join(tmp.dir, "tables.wasm");
    writeFileSync(
      path,
      wat2wasm(`(module
        (import "env" "memory" (memory 1))
        (table $a 0 funcref) (table $b 0 funcref) (table $c 0 funcref)
        (func (export "alloc") (param i32) (result i32) (i32.const 1024))
        (func (export "hog") (param i32 i32) (result i64)
          (drop (table.grow $a (ref.null func) (i32.const 10000000)))
          (drop (table.grow $b (ref.null func) (i32.const 10000000)))
          (drop (table.grow $c (ref.null func) (i32.const 10000000)))
          (loop $wait (br $wait))
          (i64.const 0)))`),
    );
    await expect(run(path, "hog", 16, { cpuMs: 30_000, timeoutMs: 60_000 })).rejects.toThrow(
      "used more memory than its limit (1 MiB for the module and 128 MiB for the runtime) and was stopped",
    );
  }, 60_000);

  test("results are packed as pointer << 32 | length", () => {
    expect(unpack(pack(0x12345678, 0x9abcdef0))).toEqual({ ptr: 0x12345678, len: 0x9abcdef0 });
    expect(unpack(-1n)).toEqual({ ptr: 0xffffffff, len: 0xffffffff });
  });
});
