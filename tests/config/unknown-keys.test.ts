// Unknown keys of config.json, found by walking the one schema, with the nearest known key.
import { expect, test } from "bun:test";
import { unknownKeys, unknownKeyWarning } from "../../src/config/unknown-keys";

test("top-level and nested typos are named with the nearest known key", () => {
  expect(unknownKeys({ gatway: {}, gateway: { prot: 1, port: 2 }, llm: { modle: "x", model: "y" }, log: { levle: "info" } })).toEqual([
    { path: "gatway", suggestion: "gateway" },
    { path: "gateway.prot", suggestion: "gateway.port" },
    { path: "llm.modle", suggestion: "llm.model" },
    { path: "log.levle", suggestion: "log.level" },
  ]);
});

test("a key far from every known one is named without a guess", () => {
  expect(unknownKeys({ analytics: true, gateway: { banana: 1 } })).toEqual([{ path: "analytics" }, { path: "gateway.banana" }]);
});

test("free-form maps, arrays and the MCP server shapes are walked the right way", () => {
  expect(unknownKeys({ tools: { approval: { any_tool_name: "ask" }, web: { allowHosts: ["a"] } } })).toEqual([]);
  expect(unknownKeys({ llm: { fallbacks: [{ model: "m", baseUrl: "u", modle: "x" }] } })).toEqual([{ path: "llm.fallbacks[0].modle", suggestion: "llm.fallbacks[0].model" }]);
  expect(
    unknownKeys({
      mcpServers: {
        git: { command: "uvx", args: ["x"], env: { ANY: "1" }, trusted: true },
        docs: { url: "https://x", headers: { A: "b" }, timeoutMS: 5 },
      },
    }),
  ).toEqual([{ path: "mcpServers.docs.timeoutMS", suggestion: "mcpServers.docs.timeoutMs" }]);
});

test("the warning line", () => {
  expect(unknownKeyWarning("/h/config.json", { path: "gatway", suggestion: "gateway" })).toBe('/h/config.json: unknown key "gatway" is ignored (did you mean "gateway"?)');
});
