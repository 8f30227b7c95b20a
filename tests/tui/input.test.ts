// The TUI's pure parts: raw key translation (Shift+Enter and friends), the line editor and
// the transcript's rendering (of the chat model shared with the web UI).
import { describe, expect, test } from "bun:test";
import { ChatModel } from "../../src/client/chat-model";
import { InputTranslator, legacyKey } from "../../src/tui/input";
import { Editor } from "../../src/tui/editor";
import { escapeTags } from "../../src/tui/text";
import { Transcript, TUI_WORDING } from "../../src/tui/transcript";

const translate = (...chunks: string[]) => {
  const t = new InputTranslator();
  return chunks.map((c) => t.push(c)).join("") + t.flush();
};

describe("InputTranslator", () => {
  test("Shift+Enter in both encodings, Ctrl+Enter and Alt+Enter become a line feed; Enter stays CR", () => {
    expect(translate("a\x1b[13;2ub")).toBe("a\nb");
    expect(translate("a\x1b[27;2;13~b")).toBe("a\nb");
    expect(translate("\x1b[13;5u\x1b[27;5;13~")).toBe("\n\n");
    expect(translate("a\x1b\rb")).toBe("a\nb");
    expect(translate("\x1b[13u\r")).toBe("\r\r");
    expect(translate("\n")).toBe("\n"); // Ctrl+J passes as is
  });

  test("other modified keys become the bytes blessed knows", () => {
    expect(translate("\x1b[27;5;99~")).toBe("\x03"); // Ctrl+C under modifyOtherKeys
    expect(translate("\x1b[99;5u")).toBe("\x03");
    expect(translate("\x1b[108;5u")).toBe("\x0c"); // Ctrl+L
    expect(translate("\x1b[9;2u")).toBe("\x1b[Z"); // Shift+Tab
    expect(translate("\x1b[27u")).toBe("\x1b");
    expect(translate("\x1b[97;3u")).toBe("\x1ba"); // Alt+a
    expect(translate("\x1b[27;2;65~")).toBe("A");
    expect(legacyKey(127, 1)).toBe("\x7f");
  });

  test("ordinary keys and escape sequences pass untouched", () => {
    expect(translate("hello \x1b[A\x1b[B\x1bOA\x1b[5~\x1b")).toBe("hello \x1b[A\x1b[B\x1bOA\x1b[5~\x1b");
  });

  test("a sequence split across reads is put back together; a lone Esc is not held", () => {
    const t = new InputTranslator();
    expect(t.push("x\x1b[13;")).toBe("x");
    expect(t.holding).toBe(true);
    expect(t.push("2uy")).toBe("\ny");
    expect(t.push("\x1b")).toBe("\x1b");
    expect(t.holding).toBe(false);
    expect(t.push("\x1b[")).toBe("");
    expect(t.flush()).toBe("\x1b[");
  });

  test("line breaks inside a bracketed paste are new lines, not Enter", () => {
    expect(translate("\x1b[200~one\r\ntwo\rthree\x1b[201~\r")).toBe("one\ntwo\nthree\r");
    expect(translate("\x1b[200~a\r", "b\x1b[201~")).toBe("a\nb");
  });
});

describe("Editor", () => {
  test("inserts, moves and deletes at the cursor", () => {
    const e = new Editor();
    e.insert("hello world");
    e.left();
    e.left();
    e.insert("X");
    expect(e.text).toBe("hello worXld");
    e.backspace();
    e.deleteForward();
    expect(e.text).toBe("hello word");
    e.home();
    e.insert(">");
    e.end();
    e.insert("\nnext");
    expect(e.text).toBe(">hello word\nnext");
    expect(e.lineCount).toBe(2);
    e.deleteWord();
    expect(e.text).toBe(">hello word\n");
    expect(e.take()).toBe(">hello word\n");
    expect(e.text).toBe("");
  });

  test("handles characters outside the BMP as one", () => {
    const e = new Editor();
    e.insert("a😀");
    e.backspace();
    expect(e.text).toBe("a");
  });

  test("draws the cursor and escapes braces", () => {
    const e = new Editor();
    e.insert("{x}");
    expect(e.render(false)).toBe("{open}x{close}");
    expect(e.render(true)).toBe("{open}x{close}{inverse} {/inverse}");
  });
});

describe("Transcript", () => {
  const ids = { thread_id: "t", response_id: "r" };
  /** Thread "t" of a chat model, open in the transcript. */
  const open = () => new Transcript(new ChatModel(TUI_WORDING), "t");

  test("renders messages, tool calls and approvals with user text escaped", () => {
    const t = open();
    t.chat.beginSend("t", "use {bold}");
    t.chat.apply({ type: "message.delta", ...ids, item_id: "m1", delta: "partial" });
    t.chat.apply({ type: "tool.started", ...ids, call_id: "c1", name: "file_list", arguments: "{}" });
    t.chat.apply({ type: "tool.completed", ...ids, call_id: "c1", output: "a.txt (file, 3 bytes)\nb.txt", is_error: false });
    t.chat.apply({ type: "approval.required", ...ids, call_id: "c2", tool: "web_fetch", arguments: '{"url":"x"}' });
    const out = t.render();
    expect(out).toContain(`You:{/bold}{/cyan-fg} ${escapeTags("use {bold}")}`);
    expect(out).toContain("partial{yellow-fg}▍");
    expect(out).toContain("↳ a.txt (file, 3 bytes){/white-fg}\n{white-fg}  b.txt");
    expect(out).toContain("{bold}a{/bold} approve");
    t.chat.apply({ type: "turn.completed", ...ids, status: "completed", error: null, waiting: "approval" });
    expect(t.render()).not.toContain("▍");
  });

  test("shows a tool result without its <tool_output> envelope", () => {
    const t = open();
    const output = '<tool_output tool="file_list" trust="untrusted">\n. is empty.\n</tool_output>';
    t.chat.loadHistory("t", { thread_id: "t", title: null, items: [{ type: "tool_call", id: "c", call_id: "c", name: "file_list", arguments: "{}", output, is_error: false, external: false }], waiting: null });
    expect(t.render()).toContain("↳ . is empty.{/white-fg}");
  });

  test("follows a turn's events: streamed text, a tool call, a failure", () => {
    const t = open();
    t.chat.apply({ type: "message.started", ...ids, item_id: "m0" });
    t.chat.apply({ type: "message.completed", ...ids, item_id: "m0", text: "" }); // tool calls only
    t.chat.apply({ type: "tool.started", ...ids, call_id: "c", name: "file_read", arguments: '{"path":"a"}' });
    t.chat.apply({ type: "tool.completed", ...ids, call_id: "c", output: "nope", is_error: true });
    t.chat.apply({ type: "message.delta", ...ids, item_id: "m1", delta: "Hel" });
    t.chat.apply({ type: "message.delta", ...ids, item_id: "m1", delta: "lo" });
    expect(t.entries.map((e) => e.kind)).toEqual(["tool", "assistant"]);
    expect(t.render()).toContain("{red-fg}↳ nope");
    expect(t.render()).toContain("Hello{yellow-fg}▍");
    t.chat.apply({ type: "turn.completed", ...ids, status: "failed", error: { code: "llm_error", message: "boom" }, waiting: null });
    expect(t.render()).toContain("Error:{/bold} boom");
    expect(t.render()).not.toContain("▍");
  });

  test("loads a thread's history", () => {
    const t = open();
    t.chat.loadHistory("t", {
      thread_id: "t",
      title: null,
      items: [
        { type: "message", id: "1", role: "user", content: "hi" },
        { type: "tool_call", id: "2", call_id: "c", name: "file_read", arguments: "{}", output: "text", is_error: false, external: false },
        { type: "message", id: "3", role: "assistant", content: "done" },
      ],
      waiting: null,
    });
    expect(t.entries.map((e) => e.kind)).toEqual(["user", "tool", "assistant"]);
  });
});
