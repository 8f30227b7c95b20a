import { expect, test } from "bun:test";
import { threadTitle } from "../../src/conversation/title";

test("a title reads as a person reads the message: no Markdown marks, fences or link targets", () => {
  expect(threadTitle("**Bold** question about `code`?")).toBe("Bold question about code?");
  expect(threadTitle("# Plans\n\nsome *notes* on [the trip](https://example.com/x)")).toBe("Plans some notes on the trip");
  expect(threadTitle("```js\nconst a = 1;\n```\nwhat does this do?")).toBe("const a = 1; what does this do?");
  expect(threadTitle("- milk\n- eggs")).toBe("milk eggs");
  expect(threadTitle("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("a b 1 2");
  expect(threadTitle("3 * 4 = 12, file_name.md")).toBe("3 * 4 = 12, file_name.md");
  expect(threadTitle("<instructions>be brief</instructions>  hello")).toBe("hello");
  expect(threadTitle("**  **")).toBeUndefined();
  expect(threadTitle("x".repeat(100))).toHaveLength(80);
});
