import { expect, test } from "bun:test";
import { NEW_THREAD, statusLine, threadLines } from "../../src/tui/status";

test("the thread list marks the open thread and the ones waiting on a gate", () => {
  const threads = [
    { id: "a", title: "Garden {plans}", created_at: 1, updated_at: 2, waiting: null },
    { id: "b", title: null, created_at: 1, updated_at: 1, waiting: "approval" as const },
  ];
  expect(threadLines(threads, "a")).toEqual([NEW_THREAD, "● Garden {open}plans{close}", "  ? (untitled)"]);
});

test("the status line shows model, thread, connection, activity and the focus's keys", () => {
  const line = statusLine({ model: "m", thread: { id: "0123456789", title: null }, connection: "connected", activity: "approval", focus: "threads" });
  expect(line).toBe(" m │ 01234567 │ {green-fg}● connected{/green-fg} │ {yellow-fg}approval needed{/yellow-fg} │ Up/Down choose · Enter open · Tab focus · Esc back · ^C quit");
  expect(statusLine({ model: "m", thread: undefined, connection: "reconnecting", activity: "ready", focus: "input" })).toContain(" m │ new │ ");
});
