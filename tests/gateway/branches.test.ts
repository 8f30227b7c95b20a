// Regenerate, edit and resend, retry, and the alternatives they leave (the 1/2 arrows): the
// earlier answer stays reachable, and the model reads only the alternative shown.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { defineTool } from "../../src/tools/tool";
import { chatEvents } from "../support/chat-events";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;

beforeAll(async () => {
  t = await startTestService({ env: { TOOLS_ASK: "guarded_tool" } });
  t.service.services.tools.register(defineTool({ name: "guarded_tool", description: "needs approval", parameters: Type.Object({}), execute: async () => "ran" }));
});
afterAll(() => t.stop());

const post = async (path: string, json?: unknown, token = t.token) => {
  const res = await t.api(path, { method: "POST", json, token });
  return { status: res.status, body: (await res.json()) as any };
};
const history = async (threadId: string) => ((await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any).items as any[];
const said = (items: any[]) => items.filter((i) => i.type === "message").map((i) => `${i.role}: ${i.content}`);
/** What the model was sent last, user and assistant messages only. */
const modelSaw = () => t.llm.lastChat().messages.filter((m: any) => m.role !== "system").map((m: any) => `${m.role}: ${m.content}`);

/** Runs a 202 route and waits for its turn to end. */
async function answered(path: string, json?: unknown): Promise<any> {
  const stream = await chatEvents(t);
  const r = await post(path, json);
  expect(r.status).toBe(202);
  const done = await stream.until((e) => e.type === "turn.completed" && e.response_id === r.body.response_id);
  await stream.close();
  return { ...r.body, done };
}

describe("answers again", () => {
  let thread: string;

  test("regenerate: a second answer to the same message; the first stays reachable as 1/2", async () => {
    t.llm.enqueue({ text: "First joke." });
    thread = (await answered("/api/chat/send", { content: "tell me a joke" })).thread_id;
    t.llm.enqueue({ text: "Second joke." });
    const again = await answered(`/api/chat/threads/${thread}/regenerate`);
    expect(again.thread_id).toBe(thread);
    expect(again.done.status).toBe("completed");
    expect(modelSaw()).toEqual(["user: tell me a joke"]);
    const items = await history(thread);
    expect(said(items)).toEqual(["user: tell me a joke", "assistant: Second joke."]);
    expect(items[0].branch).toEqual({ current: 2, count: 2 });
  });

  test("the arrows switch alternatives, and the model reads only the one shown", async () => {
    const [first] = await history(thread);
    const back = await post(`/api/chat/threads/${thread}/branches`, { item_id: first.id, branch: 1 });
    expect(back.status).toBe(200);
    expect(said(back.body.items)).toEqual(["user: tell me a joke", "assistant: First joke."]);
    expect(back.body.items[0].branch).toEqual({ current: 1, count: 2 });
    t.llm.enqueue({ text: "Glad you liked it." });
    await answered("/api/chat/send", { content: "ha", thread_id: thread });
    expect(modelSaw()).toEqual(["user: tell me a joke", "assistant: First joke.", "user: ha"]);
    // the conversation and the Conversations API read the current branch only
    const conv = (await (await t.api(`/api/v1/conversations/conv_${thread.replaceAll("-", "")}/items?order=asc`)).json()) as any;
    expect(conv.data.map((i: any) => i.content?.[0]?.text)).toEqual(["tell me a joke", "First joke.", "ha", "Glad you liked it."]);
  });

  test("edit and resend: the last message replaced and answered; the earlier one stays an alternative", async () => {
    t.llm.enqueue({ text: "Ha ha." });
    const edited = await answered(`/api/chat/threads/${thread}/edit`, { content: "haha, another one" });
    expect(edited.done.status).toBe("completed");
    expect(modelSaw()).toEqual(["user: tell me a joke", "assistant: First joke.", "user: haha, another one"]);
    const items = await history(thread);
    expect(said(items)).toEqual(["user: tell me a joke", "assistant: First joke.", "user: haha, another one", "assistant: Ha ha."]);
    expect(items[0].branch).toEqual({ current: 1, count: 2 });
    expect(items[2].branch).toEqual({ current: 2, count: 2 });
  });

  test("an earlier fork switches the whole rest of the conversation, and back again", async () => {
    const [first] = await history(thread);
    const two = await post(`/api/chat/threads/${thread}/branches`, { item_id: first.id, branch: 2 });
    expect(said(two.body.items)).toEqual(["user: tell me a joke", "assistant: Second joke."]);
    t.llm.enqueue({ text: "Another one." });
    await answered("/api/chat/send", { content: "more", thread_id: thread });
    expect(modelSaw()).toEqual(["user: tell me a joke", "assistant: Second joke.", "user: more"]);
    const [again] = await history(thread);
    const one = await post(`/api/chat/threads/${thread}/branches`, { item_id: again.id, branch: 1 });
    expect(said(one.body.items)).toEqual(["user: tell me a joke", "assistant: First joke.", "user: haha, another one", "assistant: Ha ha."]);
    expect(one.body.items[2].branch).toEqual({ current: 2, count: 2 });
    t.llm.enqueue({ text: "ok" });
    await answered("/api/chat/send", { content: "and now?", thread_id: thread });
    expect(modelSaw()).toEqual(["user: tell me a joke", "assistant: First joke.", "user: haha, another one", "assistant: Ha ha.", "user: and now?"]);
  });

  test("retry after a failed answer: the failure stays as the earlier alternative", async () => {
    t.llm.enqueue({ error: { status: 400, message: "The model refused" } });
    const failed = await answered("/api/chat/send", { content: "try this" });
    expect(failed.done.status).toBe("failed");
    t.llm.enqueue({ text: "Worked this time." });
    const retried = await answered(`/api/chat/threads/${failed.thread_id}/regenerate`);
    expect(retried.done.status).toBe("completed");
    const items = await history(failed.thread_id);
    expect(said(items)).toEqual(["user: try this", "assistant: Worked this time."]);
    const back = await post(`/api/chat/threads/${failed.thread_id}/branches`, { item_id: items[0].id, branch: 1 });
    expect(said(back.body.items)).toEqual(["user: try this"]);
  });

  test("after /compact the summary stays for the new answer, and for the one set aside", async () => {
    t.llm.enqueue({ text: "A1" }, { text: "A2" });
    const first = await answered("/api/chat/send", { content: "Q1" });
    await answered("/api/chat/send", { content: "Q2", thread_id: first.thread_id });
    t.llm.enqueue({ text: "nothing to save" }, { text: "Summary: Q1 was answered." });
    expect((await post(`/api/chat/threads/${first.thread_id}/compact`)).body.compacted).toBe(true);
    t.llm.enqueue({ text: "A2 again" });
    await answered(`/api/chat/threads/${first.thread_id}/regenerate`);
    const sent = t.llm.lastChat().messages.map((m: any) => String(m.content));
    expect(sent.some((c: string) => c.includes("Summary: Q1 was answered."))).toBe(true);
    expect(sent).not.toContain("Q1");
    expect(sent.at(-1)).toBe("Q2");
    const items = await history(first.thread_id);
    expect(items.map((i: any) => i.type === "compaction" ? "mark" : `${i.role}: ${i.content}`)).toEqual(["user: Q1", "assistant: A1", "mark", "user: Q2", "assistant: A2 again"]);
    const back = await post(`/api/chat/threads/${first.thread_id}/branches`, { item_id: items[3].id, branch: 1 });
    expect(back.body.items.map((i: any) => i.type === "compaction" ? "mark" : `${i.role}: ${i.content}`)).toEqual(["user: Q1", "assistant: A1", "mark", "user: Q2", "assistant: A2"]);
    t.llm.enqueue({ text: "A3" });
    await answered("/api/chat/send", { content: "Q3", thread_id: first.thread_id });
    const now = t.llm.lastChat().messages.map((m: any) => String(m.content));
    expect(now.some((c: string) => c.includes("Summary: Q1 was answered."))).toBe(true);
    expect(now.slice(-3)).toEqual(["Q2", "A2", "Q3"]);
  });

  test("refused with a clear 400 while an approval waits, for a bad fork or alternative; 404 for another user's thread", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "guarded_tool", arguments: {} }] });
    const waiting = await post("/api/chat", { message: "guard it" });
    const blocked = await post(`/api/chat/threads/${waiting.body.thread_id}/regenerate`);
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.message).toContain("approve or deny it first");
    expect((await post(`/api/chat/threads/${waiting.body.thread_id}/edit`, { content: "x" })).status).toBe(400);
    expect(said(await history(waiting.body.thread_id))).toEqual(["user: guard it"]);

    const [first] = await history(thread);
    for (const body of [{ item_id: first.id, branch: 3 }, { item_id: "item_nope", branch: 1 }, { item_id: first.id }, { branch: 1 }]) {
      const r = await post(`/api/chat/threads/${thread}/branches`, body);
      expect(r.status).toBe(400);
      expect(r.body.error.type).toBe("invalid_request_error");
    }
    expect((await post(`/api/chat/threads/${thread}/edit`, { content: "" })).status).toBe(400);
    expect((await post("/api/chat/threads/not-a-uuid/regenerate")).status).toBe(400);
    const other = await t.createUser();
    expect((await post(`/api/chat/threads/${thread}/regenerate`, undefined, other.token)).status).toBe(404);
    expect((await post(`/api/chat/threads/${thread}/branches`, { item_id: first.id, branch: 2 }, other.token)).status).toBe(404);
  });

  test("deleting a thread takes its alternatives along", async () => {
    expect((await t.api(`/api/chat/threads/${thread}`, { method: "DELETE" })).status).toBe(204);
    const left = await t.service.services.db.$client.execute({ sql: "select count(*) as n from branch_items where thread_id = ?", args: [thread] });
    expect(Number(left.rows[0]!.n)).toBe(0);
  });
});
