// The MCP manager on its own, against a small stdio server: results, errors, timeouts, list changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { McpManager } from "../../src/mcp/manager";
import { ToolRegistry } from "../../src/tools/registry";
import { until } from "../support/until";
import { flaky, tempDir } from "./support";

const ctx = (signal = new AbortController().signal) => ({ userId: "u", threadId: "t", signal });

describe("McpManager with a stdio server", () => {
  const tmp = tempDir();
  const eventsFile = join(tmp.dir, "events.log");
  const registry = new ToolRegistry();
  const logs: string[] = [];
  const manager = new McpManager(
    { flaky: { ...flaky, env: { FLAKY_EVENTS_FILE: eventsFile }, timeoutMs: 400 }, off: { command: "nonexistent", disabled: true } },
    registry,
    { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
  );
  const run = (name: string, args: unknown = {}, signal?: AbortSignal) => registry.run(name, JSON.stringify(args), ctx(signal));
  const events = () => (existsSync(eventsFile) ? readFileSync(eventsFile, "utf8") : "");

  beforeAll(async () => {
    manager.start();
    await until("the server to be ready", () => manager.status()[0]?.state === "ready");
  });
  afterAll(async () => {
    await manager.stop();
    tmp.cleanup();
  });

  test("disabled servers are not started; tools register under mcp__flaky__", () => {
    expect(manager.status()).toEqual([{ name: "flaky", transport: "stdio", state: "ready", tools: 8, error: null }]);
    const names = registry.specs().map((s) => s.name);
    expect(names).toContain("mcp__flaky__ping");
    expect(names).toContain("mcp__flaky__times");
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const long = names.find((n) => n.startsWith("mcp__flaky__weird_name_with_spaces"));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/_[0-9a-f]{6}$/);
    expect(logs).toContain("mcp flaky: ready with 8 tools");
  });

  test("text results are returned; other content is summarised", async () => {
    expect((await run("mcp__flaky__ping")).output).toMatch(/^pong from \d+$/);
    const picture = await run("mcp__flaky__picture");
    expect(picture).toEqual({
      output: "Here it is:\n[image: image/png, 2.0 KB]\n[resource file:///notes.txt (text/plain)]\nthe notes",
      isError: false,
      untrusted: true,
    });
  });

  test("an isError result becomes a tool error", async () => {
    expect(await run("mcp__flaky__fail")).toEqual({ output: "Error: mcp__flaky__fail failed: the flux capacitor is broken", isError: true, untrusted: true });
  });

  test("the raw JSON Schema validates arguments (its $schema dialect is dropped)", async () => {
    expect(registry.get("mcp__flaky__times")!.parameters).not.toHaveProperty("$schema");
    expect(await run("mcp__flaky__times", { a: 6, b: 7 })).toEqual({ output: "42", isError: false, untrusted: true });
    const bad = await run("mcp__flaky__times", { a: 1.5 });
    expect(bad.isError).toBe(true);
    expect(bad.output).toContain("invalid arguments for mcp__flaky__times");
    expect(bad.output).toContain("/a must be integer");
    expect(bad.output).toContain("(root) must have required property 'b'");
  });

  test("a hanging call times out after the server's timeoutMs and is cancelled on the server", async () => {
    const started = Date.now();
    const r = await run("mcp__flaky__hang");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.isError).toBe(true);
    expect(r.output).toContain("did not answer within 400 ms");
    await until("the server to see the cancellation", () => events().includes("cancelled hang"));
  });

  test("aborting the turn's signal cancels the call at once", async () => {
    const before = events().split("\n").length;
    const controller = new AbortController();
    const pending = run("mcp__flaky__hang", {}, controller.signal);
    setTimeout(() => controller.abort(new Error("turn cancelled")), 50);
    await expect(pending).rejects.toThrow("turn cancelled");
    await until("the server to see the cancellation", () => events().split("\n").length > before);
  });

  test("a list change registers the new tool", async () => {
    expect(registry.get("mcp__flaky__extra")).toBeUndefined();
    expect((await run("mcp__flaky__grow")).output).toBe("grown");
    await until("the new tool", () => registry.get("mcp__flaky__extra") !== undefined);
    expect(manager.status()[0]!.tools).toBe(9);
    expect((await run("mcp__flaky__extra")).output).toBe("extra works");
  });

  test("tools of an untrusted server default to ask; others stay auto", () => {
    expect(manager.defaultPolicy("mcp__flaky__ping")).toBe("ask");
    expect(manager.defaultPolicy("file_read")).toBe("auto");
  });

  test("stop() ends the child process", async () => {
    const pid = Number((await run("mcp__flaky__ping")).output.split(" ").pop());
    await manager.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await run("mcp__flaky__ping")).output).toContain("has been shut down");
  });
});
