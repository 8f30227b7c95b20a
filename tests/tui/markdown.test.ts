import { expect, test } from "bun:test";
import { ChatModel } from "../../src/client/chat-model";
import { markdownToTags } from "../../src/tui/markdown";
import { statusLine } from "../../src/tui/status";
import { Transcript, TUI_WORDING } from "../../src/tui/transcript";
import { clusterWidth, forBlessed, fromBlessed, resetTerminalWidths, textWidth, useCells } from "../../src/tui/cells";
import blessed from "blessed";

const plain = (tagged: string) => tagged.replace(/\{[^{}]*\}/g, "");

test("Markdown shows as styles, not marks: bold, code, fences under their language, bullets, aligned tables", () => {
  const out = markdownToTags("Use **care** with `rm`:\n\n```bash\nrm -rf {x}\n```\n\n- one\n- two\n\n| name | price |\n|---|---:|\n| basic | $1 |\n| 中文 | $10 |");
  expect(out).toContain("{bold}care{/bold}");
  expect(out).toContain("{cyan-fg}rm{/cyan-fg}");
  expect(out).toContain("{gray-fg}bash:{/gray-fg}\n  {green-fg}rm -rf {open}x{close}{/green-fg}");
  expect(plain(out)).toContain("• one\n• two");
  expect(plain(out)).not.toContain("**");
  expect(plain(out)).not.toContain("```");
  // columns line up by width in cells (中文 is four cells wide), numbers right-aligned
  const rows = plain(out).split("\n").filter((l) => l.includes("│"));
  expect(rows.map((r) => textWidth(r.slice(0, r.indexOf("│"))))).toEqual([6, 6, 6]);
  expect(rows[1]).toBe("basic │    $1");
  expect(rows[2]).toBe("中文  │   $10");
});

test("a long tool result shows its first lines and says how to open it whole", () => {
  const t = new Transcript(new ChatModel(TUI_WORDING), "t");
  const ids = { thread_id: "t", response_id: "r" };
  const output = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n");
  t.chat.apply({ type: "tool.started", ...ids, call_id: "c", name: "file_read", arguments: '{"path":"a"}' });
  t.chat.apply({ type: "tool.completed", ...ids, call_id: "c", output, is_error: false });
  const shown = plain(t.render());
  expect(shown).toContain("⚙ 1. file_read");
  expect(shown).toContain("↳ line 1\n  line 2\n  line 3\n  … /show 1 to read it whole");
  expect(shown).not.toContain("line 4");
  expect(t.tool(1)?.output).toBe(output);
});

test("grapheme clusters are measured whole, as the terminal draws them", () => {
  expect(clusterWidth("👨‍👩‍👧‍👦")).toBe(2);
  expect(clusterWidth("👩🏽‍💻")).toBe(2);
  expect(textWidth("नमस्ते")).toBe(4);
  expect(textWidth("中文 العربية 😀")).toBe(4 + 1 + 7 + 1 + 2);
  // a terminal that draws a ZWJ sequence as its parts, and skin tones apart
  resetTerminalWidths({ zwjJoins: false, modifierJoins: false, vs16Wide: true });
  try {
    expect(clusterWidth("👨‍👩‍👧‍👦")).toBe(8);
    expect(clusterWidth("👩🏽‍💻")).toBe(6);
    resetTerminalWidths({ zwjJoins: true, modifierJoins: false, vs16Wide: false });
    expect(clusterWidth("👩🏽‍💻")).toBe(4); // as tmux 3.3a draws it: 👩, then 🏽‍💻 joined
    expect(clusterWidth("👍🏽")).toBe(4);
    expect(clusterWidth("☀️")).toBe(1);
  } finally {
    resetTerminalWidths();
  }
});

test("clusters blessed would mismeasure go to it as one cell of the right width, and come back on the way out", () => {
  useCells((blessed as unknown as { unicode: unknown }).unicode, { _owrite: () => undefined });
  const text = "hi 👨‍👩‍👧‍👦 and 👩🏽‍💻 in षि, हिन्दी and 中";
  const cells = forBlessed(text);
  expect([...cells].length).toBeLessThan([...text].length);
  expect(fromBlessed(cells)).toBe(text);
  const unicode = (blessed as unknown as { unicode: { strWidth(s: string): number } }).unicode;
  expect(unicode.strWidth(cells)).toBe(textWidth(text));
});

test("the status line keeps its key hints at 60 columns, whatever the model's name", () => {
  const line = statusLine({ width: 60, model: "a-very-long-model-name-with-a-version-tag:latest", connection: "connected", activity: "approval", focus: "input" });
  expect(textWidth(plain(line))).toBeLessThanOrEqual(60);
  expect(plain(line)).toContain("Enter send · Tab focus · ^C quit");
  expect(plain(line)).toContain("approval (Tab)");
  const wide = statusLine({ width: 120, model: "scripted-model", connection: "connected", activity: "ready", focus: "input" });
  expect(plain(wide)).toBe(" scripted-model │ ● connected │ ready │ Enter send · Shift+Enter newline · Tab focus · Esc cancel · ^L clear · ^C quit");
});
