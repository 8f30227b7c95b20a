import { expect, test } from "bun:test";
import { NEW_THREAD, statusLine, threadLines } from "../../src/tui/status";

test("the thread list marks the open thread, the ones waiting on a gate and those of other channels", () => {
  const at = "2026-11-24T10:00:00.000Z";
  const threads = [
    { id: "a", title: "Garden {plans}", channel: "chat", created_at: at, updated_at: at, waiting: null },
    { id: "b", title: null, channel: null, created_at: at, updated_at: at, waiting: "approval" as const },
    { id: "c", title: "Doorbell rang", channel: "webhook", created_at: at, updated_at: at, waiting: null },
    { id: "d", title: "From a script", channel: "responses", created_at: at, updated_at: at, waiting: null },
  ];
  expect(threadLines(threads, "a")).toEqual([
    NEW_THREAD,
    "● Garden {open}plans{close}",
    "  ? (untitled)",
    "  [webhook] Doorbell rang",
    "  [api] From a script",
  ]);
});

test("the status line shows model, connection, activity and the focus's keys", () => {
  const line = statusLine({ model: "m", connection: "connected", activity: "approval", focus: "threads" });
  expect(line).toBe(" m │ {green-fg}● connected{/green-fg} │ {yellow-fg}approval needed (Tab){/yellow-fg} │ Up/Down choose · Enter open · Tab focus · Esc back · ^C quit");
  expect(statusLine({ model: "m", connection: "reconnecting", activity: "ready", focus: "input" })).toContain(" m │ {red-fg}○ reconnecting…");
});
