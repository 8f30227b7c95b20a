// Approval gates end to end: operator policies (TOOLS_ASK, config deny), the Responses API
// failing with approval_required, and GET/POST /api/chat/approvals resolving the gate.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadOfResponse } from "../../src/conversation/ids";
import { defineTool } from "../../src/tools/tool";
import { startTestService, type TestService } from "../support/harness";

const MODEL = "test-model";

/** Registers `name` as a built-in that records each run; returns the list of its runs' arguments. */
function recordingTool(t: TestService, name: string, output = `${name} ran`): unknown[] {
  const runs: unknown[] = [];
  t.service.services.tools.register(
    defineTool({
      name,
      description: `The ${name} tool`,
      parameters: Type.Object({ path: Type.Optional(Type.String()) }),
      execute: async (args) => {
        runs.push(args);
        return output;
      },
    }),
  );
  return runs;
}

const toolMessages = (t: TestService) => (t.llm.lastChat().messages as any[]).filter((m) => m.role === "tool").map((m) => m.content as string);

async function decide(t: TestService, threadId: string, decision: unknown, token?: string) {
  const res = await t.api(`/api/chat/approvals/${threadId}`, { method: "POST", json: { decision }, token });
  return { status: res.status, body: (await res.json()) as any };
}

async function approvals(t: TestService, token?: string): Promise<any[]> {
  const res = await t.api("/api/chat/approvals", { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).approvals;
}

describe("TOOLS_ASK: a tool that needs approval", () => {
  let t: TestService;
  let runs: unknown[];

  beforeAll(async () => {
    t = await startTestService({ env: { TOOLS_ASK: "test_delete, test_other" } });
    runs = recordingTool(t, "test_delete", "deleted /tmp/x");
    recordingTool(t, "test_free", "free ran");
  });
  afterAll(() => t.stop());
  beforeEach(() => {
    t.llm.reset();
    runs.length = 0;
  });

  /** A Responses turn in which the model calls test_delete: it stops at the gate. */
  async function gatedTurn(token?: string) {
    t.llm.enqueue({ text: "I will delete it.", toolCalls: [{ name: "test_delete", arguments: { path: "/tmp/x" } }] });
    const r = await t.respond({ model: MODEL, input: "delete /tmp/x" }, token);
    return { r, threadId: threadOfResponse(r.body.id)! };
  }

  test("the Responses turn fails with approval_required and a pointer to the web UI; the tool did not run", async () => {
    const { r, threadId } = await gatedTurn();
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("approval_required");
    expect(r.body.error.message).toContain("test_delete");
    expect(r.body.error.message).toContain(t.url);
    expect(r.body.error.message).toContain(threadId);
    expect(runs).toHaveLength(0);
    expect(t.llm.chatRequests()).toHaveLength(1);
    // the leading prose is kept; no tool activity or gate appears in the output
    expect(r.body.output.map((o: any) => o.type)).toEqual(["message"]);

    // streamed, the same turn ends in response.failed with no gate event
    t.llm.enqueue({ toolCalls: [{ name: "test_delete", arguments: {} }] });
    const res = await t.api("/api/v1/responses", { method: "POST", json: { model: MODEL, input: "again", stream: true } });
    const raw = await res.text();
    expect(raw).toContain("event: response.failed");
    expect(raw).toContain("approval_required");
    expect(raw).not.toContain("approval.required");
    expect(runs).toHaveLength(0);
  });

  test("a further Responses POST on the thread is refused with 400 naming the pending approval", async () => {
    const { r } = await gatedTurn();
    const next = await t.respond({ model: MODEL, previous_response_id: r.body.id, input: "hello?" });
    expect(next.status).toBe(400);
    expect(next.body.error.type).toBe("invalid_request_error");
    expect(next.body.error.message).toContain("approval of test_delete");
    expect(next.body.error.message).toContain(t.url);
    expect(runs).toHaveLength(0);
  });

  test("GET /api/chat/approvals lists the pending call", async () => {
    const { r, threadId } = await gatedTurn();
    const list = await approvals(t);
    const mine = list.find((a) => a.thread_id === threadId);
    expect(mine).toEqual({
      thread_id: threadId,
      thread_title: expect.any(String),
      call_id: expect.stringMatching(/^call_[0-9a-f]+$/),
      tool: "test_delete",
      arguments: '{"path":"/tmp/x"}',
      // the chat endpoints give ISO 8601 times (the Responses object keeps Unix seconds)
      created_at: new Date(r.body.created_at * 1000).toISOString(),
    });
    // newest first
    expect(list[0].thread_id).toBe(threadId);
  });

  test("approve: the tool runs, its output reaches the model, the answer arrives, the thread goes on", async () => {
    const { threadId } = await gatedTurn();
    t.llm.enqueue({ text: "Deleted /tmp/x." });
    const d = await decide(t, threadId, "approve");
    expect(d.status).toBe(200);
    expect(d.body).toEqual({
      thread_id: threadId,
      response_id: expect.stringMatching(/^resp_[0-9a-f]{64}$/),
      status: "completed",
      output_text: "Deleted /tmp/x.",
      error: null,
      pending_approval: null,
    });
    expect(runs).toEqual([{ path: "/tmp/x" }]);
    expect(toolMessages(t)).toEqual(['<tool_output tool="test_delete" trust="untrusted">\ndeleted /tmp/x\n</tool_output>']);
    expect((await approvals(t)).find((a) => a.thread_id === threadId)).toBeUndefined();

    // the thread continues over the Responses API from the approval's response
    t.llm.enqueue({ text: "Anything else?" });
    const next = await t.respond({ model: MODEL, previous_response_id: d.body.response_id, input: "thanks" });
    expect(next.status).toBe(200);
    expect(next.body.status).toBe("completed");
    expect(next.body.output[0].content[0].text).toBe("Anything else?");
    const dialogue = (t.llm.lastChat().messages as any[]).filter((m) => m.role !== "system");
    expect(dialogue.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);

    // once resolved, there is nothing left to decide
    const again = await decide(t, threadId, "approve");
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/no tool call is waiting for approval/i);
  });

  test("deny: the model gets a denial as the tool result; the tool never runs", async () => {
    const { threadId } = await gatedTurn();
    t.llm.enqueue({ text: "Understood, I did not delete it." });
    const d = await decide(t, threadId, "deny");
    expect(d.status).toBe(200);
    expect(d.body.status).toBe("completed");
    expect(d.body.output_text).toBe("Understood, I did not delete it.");
    expect(runs).toHaveLength(0);
    const [result] = toolMessages(t);
    expect(result).toContain("the user denied this call of test_delete");
  });

  test("always: runs now, and later calls of the tool by this user run without asking; other users are still asked", async () => {
    const user = await t.createUser("member");
    const { threadId } = await gatedTurn(user.token);
    t.llm.enqueue({ text: "Done." });
    const d = await decide(t, threadId, "always", user.token);
    expect(d.body.status).toBe("completed");
    expect(runs).toHaveLength(1);

    // a later turn of the same user: no gate
    t.llm.enqueue({ toolCalls: [{ name: "test_delete", arguments: { path: "/tmp/y" } }] }, { text: "Deleted /tmp/y." });
    const later = await t.respond({ model: MODEL, input: "delete /tmp/y" }, user.token);
    expect(later.body.status).toBe("completed");
    expect(later.body.output[0].content[0].text).toBe("Deleted /tmp/y.");
    expect(runs).toHaveLength(2);

    // another user (here the owner) is still asked
    const { r } = await gatedTurn();
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("approval_required");
    expect(runs).toHaveLength(2);
  });

  test("a continued turn can stop at the next call that needs approval", async () => {
    const other = await t.createUser("member");
    const { threadId } = await gatedTurn(other.token);
    t.llm.enqueue({ toolCalls: [{ name: "test_delete", arguments: { path: "/tmp/z" } }] });
    const d = await decide(t, threadId, "approve", other.token);
    expect(d.body.status).toBe("completed");
    expect(d.body.pending_approval).toEqual({ call_id: expect.any(String), tool: "test_delete", arguments: '{"path":"/tmp/z"}' });
    expect(runs).toEqual([{ path: "/tmp/x" }]);
    const listed = await approvals(t, other.token);
    expect(listed.map((a) => a.arguments)).toContain('{"path":"/tmp/z"}');
  });

  test("tools without a policy run freely", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_free", arguments: {} }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "go" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)[0]).toContain("free ran");
  });

  test("another user can neither see nor resolve someone else's gate (404)", async () => {
    const { threadId } = await gatedTurn();
    const intruder = await t.createUser("admin");
    expect((await approvals(t, intruder.token)).find((a) => a.thread_id === threadId)).toBeUndefined();
    for (const decision of ["approve", "deny", "always"]) {
      const d = await decide(t, threadId, decision, intruder.token);
      expect(d.status).toBe(404);
      expect(d.body.error.type).toBe("not_found_error");
    }
    expect(runs).toHaveLength(0);
    // the owner's gate is untouched
    expect((await approvals(t)).find((a) => a.thread_id === threadId)).toBeDefined();
  });

  test("bad requests: a decision that is not one of the three, a thread without a gate, an unknown thread, no token", async () => {
    const { threadId } = await gatedTurn();
    for (const decision of ["yes", "", null, 1, "APPROVE"]) {
      const d = await decide(t, threadId, decision);
      expect(d.status).toBe(400);
      expect(d.body.error.message).toContain("decision");
    }
    const noBody = await t.api(`/api/chat/approvals/${threadId}`, { method: "POST", json: {} });
    expect(noBody.status).toBe(400);
    expect(runs).toHaveLength(0);

    t.llm.enqueue({ text: "plain" });
    const plain = await t.respond({ model: MODEL, input: "no tools here" });
    const ungated = await decide(t, threadOfResponse(plain.body.id)!, "approve");
    expect(ungated.status).toBe(400);
    expect(ungated.body.error.type).toBe("invalid_request_error");

    expect((await decide(t, crypto.randomUUID(), "approve")).status).toBe(404);
    // a malformed id is a 400, as on every route that names a thread
    const malformed = await decide(t, "not-a-thread", "approve");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toEqual({ message: "`thread_id` must be a thread UUID.", type: "invalid_request_error", code: null });

    expect((await t.api("/api/chat/approvals", { token: null })).status).toBe(401);
    expect((await t.api(`/api/chat/approvals/${threadId}`, { method: "POST", json: { decision: "approve" }, token: null })).status).toBe(401);
    expect(runs).toHaveLength(0);
  });
});

describe("operator policy deny (config.json)", () => {
  let t: TestService;
  let root: string;
  let runs: unknown[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "service-safety-"));
    const home = join(root, "home");
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, "config.json"), JSON.stringify({ tools: { approval: { test_wipe: "deny", test_ask: "ask" } } }));
    t = await startTestService({ keepHome: home });
    runs = recordingTool(t, "test_wipe");
    recordingTool(t, "test_ask");
  });
  afterAll(async () => {
    await t.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("a denied tool never runs and the model sees the denial; nobody is asked", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_wipe", arguments: {} }] }, { text: "I may not wipe." });
    const r = await t.respond({ model: MODEL, input: "wipe everything" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("I may not wipe.");
    expect(runs).toHaveLength(0);
    expect(toolMessages(t)[0]).toContain("test_wipe is disabled by the operator's policy");
    expect(await approvals(t)).toEqual([]);
  });

  test("`ask` in config.json gates like TOOLS_ASK", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_ask", arguments: {} }] });
    const r = await t.respond({ model: MODEL, input: "ask first" });
    expect(r.body.error.code).toBe("approval_required");
    expect((await approvals(t)).map((a) => a.tool)).toEqual(["test_ask"]);
  });
});

describe("the approval POST counts against the turn budget", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { TOOLS_ASK: "test_delete", RESPONSES_RATE_LIMIT: "1" } });
    recordingTool(t, "test_delete");
  });
  afterAll(() => t.stop());

  test("after the Responses POST used the budget, the decision is rate limited", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_delete", arguments: {} }] });
    const r = await t.respond({ model: MODEL, input: "delete" });
    expect(r.body.error.code).toBe("approval_required");
    const d = await decide(t, threadOfResponse(r.body.id)!, "approve");
    expect(d.status).toBe(429);
    expect(d.body.error.type).toBe("rate_limit_error");
  });
});
