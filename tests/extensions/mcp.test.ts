// An extension that bundles an MCP server: started from the extension's folder like the
// configured MCP servers, its tools called by the agent; its API key reaches the server in
// the environment variable the manifest names, and never the model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import type { TestService } from "../support/harness";
import { until } from "../support/until";
import { allLlmText, MODEL, startWithExtensions, tempDir, toolMessages, writeMcpExtension } from "./support";

const KEY = "mk-live-abcdefghijklmnopqrstuvwxyz012345";

/** Polls GET /api/extensions until the extension reaches `state` (bounded). */
async function waitForState(t: TestService, name: string, state: string, timeoutMs = 15_000): Promise<any> {
  let last: any;
  return until(
    () => `extension ${name} to reach ${state}: ${JSON.stringify(last)}`,
    async () => {
      const list = (await (await t.api("/api/extensions")).json()) as any;
      last = list.extensions.find((e: any) => e.name === name);
      return last?.state === state && last;
    },
    { timeoutMs },
  );
}

async function call(t: TestService, tool: string, args: unknown = {}): Promise<string> {
  t.llm.reset();
  t.llm.enqueue({ toolCalls: [{ name: tool, arguments: args }] }, { text: "Done." });
  const r = await t.respond({ model: MODEL, input: `run ${tool}` });
  expect(r.body.status).toBe("completed");
  return toolMessages(t)[0].content as string;
}

describe("an extension bundling an MCP server", () => {
  let t: TestService;
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    tmp = tempDir();
    const plain = writeMcpExtension(tmp.dir, { name: "calc" });
    const keyed = writeMcpExtension(tmp.dir, { name: "keyed", credentials: { type: "api_key", name: "service key", env: "EXT_KEY" } });
    t = await startWithExtensions([plain, keyed]);
  });
  afterAll(async () => {
    await t.stop();
    tmp.cleanup();
  });

  test("its server starts from the extension's folder and the agent calls its tools", async () => {
    const info = await waitForState(t, "calc", "ready");
    expect(info).toMatchObject({ runtime: "mcp", credentials: "none", authorized: true, tools: ["ext__calc__add", "ext__calc__reveal_key", "ext__calc__where"] });
    expect(await call(t, "ext__calc__add", { a: 2, b: 40 })).toContain("sum=42");
    const where = await call(t, "ext__calc__where");
    expect(where).toContain(`cwd=${realpathSync(`${t.home}/extensions/calc`)}`);
    expect(where).toContain("greeting=hello");
    // MCP servers of extensions the operator installed are trusted: no approval is asked
    expect(t.llm.chatRequests()).toHaveLength(2);
  });

  test("without its key the server is not started, and its tools say how to set the key", async () => {
    const info = await waitForState(t, "keyed", "waiting");
    expect(info).toMatchObject({ authorized: false, error: "waits for its API key" });
    expect(await call(t, "ext__keyed__add", { a: 1, b: 1 })).toContain("needs its service key");
  });

  test("once the key is set the server starts with it in its environment; the model never sees it", async () => {
    const res = await t.api("/api/extensions/keyed/key", { method: "POST", json: { key: KEY } });
    expect(res.status).toBe(200);
    await waitForState(t, "keyed", "ready");
    expect(await call(t, "ext__keyed__add", { a: 1, b: 1 })).toContain("sum=2");
    // a leaky tool returns the key: it is redacted before the model or the caller gets it
    const leaked = await call(t, "ext__keyed__reveal_key");
    expect(leaked).toContain("my key is [REDACTED");
    expect(allLlmText(t)).not.toContain(KEY);
    expect(t.logs.join("\n")).not.toContain(KEY);
  });
});
