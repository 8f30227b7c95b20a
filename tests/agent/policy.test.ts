// A user's approval policy is one function until the user's decisions change, so that what a
// turn offers the model is filtered once per user, not twice a turn (agent/offer.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { approvalPolicies } from "../../src/agent/policy";
import { ToolOffer } from "../../src/agent/offer";
import { DEFAULTS } from "../../src/config/schema";
import type { ToolSpec } from "../../src/llm/types";
import { openLibsql } from "../../src/store/libsql";
import { ensureOwner, OWNER_ID } from "../../src/store/users";
import type { ToolRegistry } from "../../src/tools/registry";

const dir = mkdtempSync(join(tmpdir(), "policy-"));
const store = await openLibsql(`file:${join(dir, "s.db")}`);
await ensureOwner(store.db);
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const config = { ...DEFAULTS, tools: { ...DEFAULTS.tools, approval: { "shell_*": "deny" as const, web_fetch: "ask" as const } } };

test("the same function for a user until one of the user's decisions changes", async () => {
  const policies = approvalPolicies(store.db, config);
  const first = await policies.policies(OWNER_ID);
  expect(await policies.policies(OWNER_ID)).toBe(first);
  expect(first("web_fetch")).toBe("ask");
  await policies.allowAlways(OWNER_ID, "web_fetch");
  const after = await policies.policies(OWNER_ID);
  expect(after).not.toBe(first);
  expect(after("web_fetch")).toBe("auto");
  expect(after("shell_run")).toBe("deny");
  policies.forget(OWNER_ID);
  expect(await policies.policies(OWNER_ID)).not.toBe(after);
});

test("the tools offered are filtered once per policy function and set of registered tools", async () => {
  const spec = (name: string): ToolSpec => ({ name, description: name, parameters: { type: "object", properties: {} } });
  let specs = [spec("file_read"), spec("shell_run"), spec("web_fetch")];
  const registry = { specs: () => specs } as unknown as ToolRegistry;
  const policy = await approvalPolicies(store.db, config).policies(OWNER_ID);
  let asked = 0;
  const counted = (tool: string) => (asked++, policy(tool));
  const offer = () => new ToolOffer({ registry, external: [], policy: counted, budget: { window: 100_000, prompt: 90_000 } }).specs().map((t) => t.name);
  expect(offer()).toEqual(["file_read", "web_fetch"]);
  expect(offer()).toEqual(["file_read", "web_fetch"]);
  expect(asked).toBe(3);
  // offered whole with no caller tools, it is the same list each turn (its JSON is made once)
  const list = () => new ToolOffer({ registry, external: [], policy: counted, budget: { window: 100_000, prompt: 90_000 } }).specs();
  expect(list()).toBe(list());
  const caller = spec("caller_tool");
  const withCaller = new ToolOffer({ registry, external: [caller], policy: counted, budget: { window: 100_000, prompt: 90_000 } }).specs();
  expect(withCaller.map((t) => t.name)).toEqual(["file_read", "web_fetch", "caller_tool"]);
  expect(list().map((t) => t.name)).toEqual(["file_read", "web_fetch"]);
  // a tool registered meanwhile: the registry's list is a new one, filtered again
  specs = [...specs, spec("shell_exec"), spec("memory_search")];
  expect(offer()).toEqual(["file_read", "web_fetch", "memory_search"]);
  expect(asked).toBe(8);
});
