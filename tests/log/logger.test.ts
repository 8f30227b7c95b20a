// The logger: JSON lines (ts, level, msg, fields), pretty lines, levels, the plain-function call
// shape every module uses, and redaction of the service's secrets before anything is written.
import { expect, test } from "bun:test";
import { createLogger, logTurn } from "../../src/log";
import { createSafety } from "../../src/safety";

const NOW = new Date("2026-11-24T10:00:00.000Z");

function capture(format: "json" | "pretty", level?: "debug" | "info" | "warn" | "error") {
  const lines: string[] = [];
  const log = createLogger({ format, level, write: (l) => lines.push(l), now: () => NOW });
  return { log, lines };
}

test("json: one object per line with ts, level and msg first, then the fields", () => {
  const { log, lines } = capture("json");
  log("plain call", undefined);
  log.warn("with fields", { job_id: "j1", n: 3, nested: { a: [1, "two"] }, error: new Error("boom") });
  expect(lines).toEqual([
    '{"ts":"2026-11-24T10:00:00.000Z","level":"info","msg":"plain call"}',
    '{"ts":"2026-11-24T10:00:00.000Z","level":"warn","msg":"with fields","job_id":"j1","n":3,"nested":{"a":[1,"two"]},"error":"boom"}',
  ]);
  // a field cannot take the place of ts, level or msg
  log.info("x", { msg: "forged", level: "error" });
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ msg: "x", level: "info" });
  // a message with line breaks is still one line
  log.error("two\nlines");
  expect(lines.at(-1)!.includes("\n")).toBe(false);
});

test("pretty: time, level, message, key=value", () => {
  const { log, lines } = capture("pretty");
  log.info("turn", { status: "completed", duration_ms: 12, title: "two words" });
  expect(lines).toEqual(['2026-11-24T10:00:00.000Z INFO  turn status=completed duration_ms=12 title="two words"']);
});

test("a child log adds its fields (a component) to every record; the record's own fields come after", () => {
  const { log, lines } = capture("json");
  const mcp = log.child({ component: "mcp" });
  mcp.warn("mcp fs: the server process exited", { server: "fs" });
  mcp.child({ server: "fs" }).error("gone");
  log.info("parent");
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    { ts: NOW.toISOString(), level: "warn", msg: "mcp fs: the server process exited", component: "mcp", server: "fs" },
    { ts: NOW.toISOString(), level: "error", msg: "gone", component: "mcp", server: "fs" },
    { ts: NOW.toISOString(), level: "info", msg: "parent" },
  ]);
});

test("levels below LOG_LEVEL are not written", () => {
  const { log, lines } = capture("json", "warn");
  log.debug("d");
  log.info("i");
  log("callable is info");
  log.warn("w");
  log.error("e");
  expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["w", "e"]);
});

test("secrets never reach a line: the service's own, known formats, Authorization headers, in messages and fields", () => {
  const webhookSecret = 'hook"secret\\with-quotes-0123';
  const { log, lines } = capture("json", "debug");
  log.redactWith(createSafety({ secrets: ["instance-token-0123456789abcdef", "sk-llm-key-0123456789", webhookSecret] }).redact);
  log.info("request failed: Authorization: Bearer instance-token-0123456789abcdef", {
    headers: { authorization: "Bearer svc_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" },
    error: new Error("upstream said: invalid key sk-llm-key-0123456789"),
    secret: webhookSecret,
    list: ["ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"],
  });
  const line = lines.join("\n");
  for (const secret of ["instance-token-0123456789abcdef", "sk-llm-key-0123456789", "svc_0123456789abcdef", "ghp_0123456789", "with-quotes-0123"]) {
    expect(line).not.toContain(secret);
  }
  expect(line).toContain("[REDACTED");
  expect(() => JSON.parse(line)).not.toThrow();
});

test("a sink that throws never throws into the caller; unserialisable fields still give a line", () => {
  const log = createLogger({ format: "json", write: () => {
    throw new Error("disk full");
  } });
  expect(() => log.error("x")).not.toThrow();
  const { log: l2, lines } = capture("json");
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  l2.info("cyclic", { loop, big: 10n });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("cyclic");
});

test("logTurn: the turn line's fields, warn with the error code when it failed", () => {
  const { log, lines } = capture("json");
  const base = { id: "resp_1", threadId: "t1", usage: { inputTokens: 5, outputTokens: 7 } };
  logTurn(log, { ...base, status: "completed", error: null }, { userId: "u", channel: "chat" }, Date.now() - 20);
  logTurn(log, { ...base, status: "failed", error: { code: "llm_error" } }, { userId: "u", channel: "webhook" }, Date.now());
  const [ok, bad] = lines.map((l) => JSON.parse(l));
  expect(ok).toMatchObject({ level: "info", msg: "turn", response_id: "resp_1", thread_id: "t1", user_id: "u", channel: "chat", status: "completed", input_tokens: 5, output_tokens: 7 });
  expect(ok.duration_ms).toBeGreaterThanOrEqual(20);
  expect(ok.error_code).toBeUndefined();
  expect(bad).toMatchObject({ level: "warn", status: "failed", error_code: "llm_error", channel: "webhook" });
});
