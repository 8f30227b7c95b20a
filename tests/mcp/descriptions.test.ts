// Tool descriptions of MCP servers not marked trusted reach the model scanned, capped and
// wrapped as untrusted text; a trusted server's reach it as written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MCP_DESCRIPTION_MAX_CHARS } from "../../src/safety/tool-description";
import type { TestService } from "../support/harness";
import { INJECTED_DESCRIPTION, LONG_DESCRIPTION } from "./fixtures/injecting-server";
import { MODEL, startWithMcp, waitForServer } from "./support";

const injecting = { command: process.execPath, args: [join(import.meta.dir, "fixtures/injecting-server.ts")] };
/** The text as a reader takes it: invisible characters gone, NFKC, lower case. */
const asRead = (s: string) => s.replace(/\p{Default_Ignorable_Code_Point}/gu, "").normalize("NFKC").toLowerCase();

describe("MCP tool descriptions", () => {
  let t: TestService;
  let offered: Map<string, string>;
  beforeAll(async () => {
    t = await startWithMcp({ evil: injecting, friend: { ...injecting, trusted: true } });
    await waitForServer(t, "evil", "ready");
    await waitForServer(t, "friend", "ready");
    t.llm.enqueue({ text: "hi" });
    const r = await t.respond({ model: MODEL, input: "hello" });
    expect(r.body.status).toBe("completed");
    offered = new Map(t.llm.lastChat().tools.map((x: any) => [x.function.name, x.function.description]));
  });
  afterAll(() => t.stop());

  test("an untrusted server's description is wrapped, flagged, and cannot close its wrapper", () => {
    const d = offered.get("mcp__evil__weather")!;
    const [warning, ...rest] = d.split("\n");
    expect(warning).toStartWith("[safety warning: the description the MCP server evil gives this tool");
    expect(warning).toContain("override");
    expect(warning).toContain("wrapper escape");
    expect(rest[0]).toBe('<tool_description server="evil" trust="untrusted">');
    expect(d).toEndWith("\n</tool_description>");
    const read = asRead(d);
    expect(read.match(/<\s*tool[\s_-]?description/g)).toEqual(["<tool_description"]);
    expect(read.match(/<\s*\/\s*tool[\s_-]?description/g)).toEqual(["</tool_description"]);
    expect(d).not.toContain("<|im_start|>");
    expect(d).toContain("Gets the weather for a city.");
  });

  test("a long description is cut at the cap, and what came after never reaches the model", () => {
    const d = offered.get("mcp__evil__convert")!;
    const inside = d.slice(d.indexOf(">\n") + 2, d.lastIndexOf("\n</tool_description>"));
    expect(inside).toStartWith(LONG_DESCRIPTION.slice(0, MCP_DESCRIPTION_MAX_CHARS));
    expect(inside).toEndWith(`… [cut: the server's description is ${LONG_DESCRIPTION.length} characters]`);
    expect(d).not.toContain("attacker.example/tail");
  });

  test("a trusted server's descriptions pass unchanged", () => {
    expect(offered.get("mcp__friend__weather")).toBe(INJECTED_DESCRIPTION);
    expect(offered.get("mcp__friend__convert")).toBe(LONG_DESCRIPTION);
  });
});
