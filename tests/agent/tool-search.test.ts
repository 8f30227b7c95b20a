// Tools on demand: with a 4,096-token window the three stock MCP servers (filesystem, memory,
// everything: 36 tools) and the built-ins no longer fit, so the model is offered tool_search
// and then the tools it found; every request fits the window.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rawToolTokens } from "../../src/context/estimate";
import { charTokens, startScriptedLLM } from "../support/scripted-llm";
import type { TestService } from "../support/harness";
import { MODEL, everything, filesystem, memoryServer, startWithMcp, tempDir, waitForServer } from "../mcp/support";

const WINDOW = 4096;
const offered = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const answer = (body: any): string =>
  body.output.filter((i: any) => i.type === "message").flatMap((m: any) => m.content.map((c: any) => c.text)).join("");
const toolOutputs = (body: any): string[] => body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);

describe("a 4,096-token window with the three stock MCP servers", () => {
  let t: TestService;
  const tmp = tempDir("tool-search-");
  const files = join(tmp.dir, "files");
  const graph = join(tmp.dir, "graph.jsonl");

  beforeAll(async () => {
    mkdirSync(files);
    const llm = await startScriptedLLM({ contextWindow: WINDOW, countTokens: charTokens });
    t = await startWithMcp(
      { filesystem: filesystem(files), memory: memoryServer(graph), everything },
      { llm, env: { LLM_CONTEXT_WINDOW: String(WINDOW) }, config: { tools: { approval: { "mcp__memory__*": "auto", "mcp__everything__get-*": "auto" } } } },
    );
    for (const name of ["filesystem", "memory", "everything"]) await waitForServer(t, name, "ready");
  });
  afterAll(async () => {
    await t.stop();
    tmp.cleanup();
  });
  beforeEach(() => t.llm.reset());

  /** Every request the model got was within the window, and none was refused. */
  function expectAllFit(n: number) {
    const requests = t.llm.chatRequests();
    expect(requests).toHaveLength(n);
    for (const r of requests) expect(charTokens(r.body)).toBeLessThanOrEqual(WINDOW);
  }

  test("all the tools together would take far more than a quarter of the window", () => {
    const specs = t.service.services.tools.specs();
    expect(specs.length).toBeGreaterThanOrEqual(45);
    expect(specs.filter((s) => s.name.startsWith("mcp__"))).toHaveLength(36);
    expect(rawToolTokens(specs)).toBeGreaterThan(WINDOW);
  });

  test("hello is answered: the model is offered tool_search alone", async () => {
    const r = await t.respond({ model: MODEL, input: "hello" });
    expect(r.body.status).toBe("completed");
    expect(answer(r.body)).toBe("You said: hello");
    expect(offered(t.llm.lastChat())).toEqual(["tool_search"]);
    const search = t.llm.lastChat().tools[0].function;
    expect(search.description).toContain("mcp__memory__*");
    expect(search.description).toContain("file_*");
    expectAllFit(1);
  });

  test("the model searches, is offered what it found, and calls it: the memory server stores the entity", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "tool_search", arguments: { query: "create entities in the knowledge graph" } }] },
      { toolCalls: [{ name: "mcp__memory__create_entities", arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["drinks tea"] }] } }] },
      { text: "Noted: Ada drinks tea." },
    );
    const r = await t.respond({ model: MODEL, input: "Remember that Ada drinks tea." });
    expect(r.body.status).toBe("completed");
    expect(answer(r.body)).toBe("Noted: Ada drinks tea.");
    const [first, second, third] = t.llm.chatRequests().map((x) => x.body);
    expect(offered(first)).toEqual(["tool_search"]);
    // what tool_search answered, and what the next step offered
    const found = toolOutputs(second)[0]!;
    expect(found).toContain("- mcp__memory__create_entities: Create multiple new entities in the knowledge graph");
    expect(offered(second)[0]).toBe("tool_search");
    expect(offered(second)).toContain("mcp__memory__create_entities");
    expect(offered(second).length).toBeLessThan(10);
    expect(rawToolTokens(second.tools.map((x: any) => x.function))).toBeLessThanOrEqual(WINDOW / 4);
    // the tool it called stays offered for the rest of the turn
    expect(offered(third)).toContain("mcp__memory__create_entities");
    expect(toolOutputs(third)[1]).toContain("Ada");
    expect(readFileSync(graph, "utf8")).toContain('"name":"Ada"');
    expectAllFit(3);
  });

  test("a tool found on another server: get-sum", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "tool_search", arguments: { query: "add two numbers" } }] },
      { toolCalls: [{ name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } }] },
      { text: "42" },
    );
    const r = await t.respond({ model: MODEL, input: "what is 2 + 40?" });
    expect(r.body.status).toBe("completed");
    const [, second, third] = t.llm.chatRequests().map((x) => x.body);
    expect(toolOutputs(second)[0]).toMatch(/^[\s\S]*- mcp__everything__get-sum: /);
    expect(offered(second)).toContain("mcp__everything__get-sum");
    expect(toolOutputs(third)[1]).toContain("The sum of 2 and 40 is 42.");
    expectAllFit(3);
  });

  test("a tool called without a search still runs (it exists and is allowed), and is offered from then on", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "mcp__memory__read_graph", arguments: {} }] }, { text: "done" });
    const r = await t.respond({ model: MODEL, input: "what do you know?" });
    expect(r.body.status).toBe("completed");
    const [first, second] = t.llm.chatRequests().map((x) => x.body);
    expect(offered(first)).toEqual(["tool_search"]);
    expect(toolOutputs(second)[0]).toContain("Ada");
    expect(offered(second)).toEqual(["tool_search", "mcp__memory__read_graph"]);
  });

  test("a search that finds nothing says so, and offers nothing more", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "tool_search", arguments: { query: "zzyzx qqq" } }] }, { text: "no such tool" });
    await t.respond({ model: MODEL, input: "do the impossible" });
    const [, second] = t.llm.chatRequests().map((x) => x.body);
    expect(toolOutputs(second)[0]).toContain('No tool matches "zzyzx qqq"');
    expect(offered(second)).toEqual(["tool_search"]);
  });

  test("caller tools are always offered beside tool_search, and the turn pauses on them", async () => {
    const weather = { type: "function", name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } } } };
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const r = await t.respond({ model: MODEL, input: "weather in Oslo?", tools: [weather] });
    expect(r.body.status).toBe("completed");
    expect(r.body.output.at(-1)).toMatchObject({ type: "function_call", name: "get_weather" });
    expect(offered(t.llm.lastChat())).toEqual(["tool_search", "get_weather"]);
  });

  test("a caller tool may not be named tool_search", async () => {
    const fake = { type: "function", name: "tool_search", description: "x", parameters: { type: "object", properties: {} } };
    const r = await t.respond({ model: MODEL, input: "hi", tools: [fake] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("tool_search");
  });

  test("the filesystem server's tools are found by what they do", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "tool_search", arguments: { query: "list the files in a directory", limit: 3 } }] }, { toolCalls: [{ name: "mcp__filesystem__list_allowed_directories", arguments: {} }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "which files are there?" });
    // the filesystem server is not trusted and has no rule: its tool asks first
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("approval_required");
    const [, second] = t.llm.chatRequests().map((x) => x.body);
    const said = toolOutputs(second)[0]!;
    const lines = said.split("\n").filter((l) => l.startsWith("- "));
    const more = /Also matching[^:]*: (.*)/.exec(said)?.[1]?.split(", ") ?? [];
    expect(lines.length + more.length).toBe(3);
    expect(lines[0]).toStartWith("- mcp__filesystem__list_directory");
    // what the answer says is offered is what the next step offers
    expect(offered(second)).toEqual(["tool_search", ...lines.map((l) => l.slice(2, l.indexOf(":")))]);
    expect(existsSync(files)).toBe(true);
  });
});
