// The system prompt is made once for the same identity documents and day (src/agent/prompt.ts):
// a new day or changed documents (a new array from memory/identity.ts) make it again.
import { expect, test } from "bun:test";
import { systemPrompt } from "../../src/agent/prompt";

test("the same documents on the same day give the same prompt; a new day or new documents a new one", () => {
  const docs = [{ path: "SOUL.md", content: "Be brief." }];
  const monday = new Date("2026-11-23T10:00:00Z");
  const first = systemPrompt(docs, monday);
  expect(first).toContain("Today is 2026-11-23.");
  expect(first).toContain("## SOUL.md\n\nBe brief.");
  expect(systemPrompt(docs, new Date("2026-11-23T23:59:00Z"))).toBe(first);
  const tuesday = systemPrompt(docs, new Date("2026-11-24T00:00:01Z"));
  expect(tuesday).toContain("Today is 2026-11-24.");
  expect(tuesday).not.toContain("2026-11-23");
  const changed = systemPrompt([{ path: "SOUL.md", content: "Be thorough." }], new Date("2026-11-24T08:00:00Z"));
  expect(changed).toContain("Be thorough.");
  expect(changed).not.toContain("Be brief.");
  expect(systemPrompt([], monday)).not.toContain("# Workspace identity files");
});
