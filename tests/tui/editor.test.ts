import { expect, test } from "bun:test";
import { Editor } from "../../src/tui/editor";

test("editing keys change the text and cursor; other keys are left to the caller", () => {
  const e = new Editor();
  for (const ch of "helo") expect(e.key("", ch)).toBe(true);
  expect(e.key("left")).toBe(true);
  expect(e.key("", "l")).toBe(true);
  expect(e.text).toBe("hello");
  expect(e.key("linefeed")).toBe(true); // Shift+Enter, Alt+Enter, Ctrl+J
  expect(e.text).toBe("hell\no");
  expect(e.key("end")).toBe(true);
  expect(e.key("backspace")).toBe(true);
  expect(e.text).toBe("hell\n");
  expect(e.key("", "x")).toBe(true);
  expect(e.key("C-a")).toBe(true); // start of the current line
  expect(e.key("C-d")).toBe(true);
  expect(e.text).toBe("hell\n");
  expect(e.key("C-w")).toBe(true);
  expect(e.text).toBe("");
  for (const ch of "two words") e.key("", ch);
  expect(e.key("C-u")).toBe(true);
  expect(e.text).toBe("");
  // Enter's second half, and keys that are not editing keys, are not the editor's
  expect(e.key("return")).toBe(false);
  expect(e.key("tab")).toBe(false);
  expect(e.key("C-l")).toBe(false);
  expect(e.text).toBe("");
});
