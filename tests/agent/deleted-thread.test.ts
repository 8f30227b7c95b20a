// A thread deleted while a turn runs on it and others wait for it: every one of those turns
// ends failed with not_found, whichever channel started it (Responses, chat, webhook), and
// none reaches the model or answers completed for what is then gone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { watchBegins } from "../support/agent-watch";
import { chatEvents } from "../support/chat-events";
import { startTestService, type TestService } from "../support/harness";
import { finished } from "../channels/webhook/support";

const SECRET = "deleted-thread-secret-0123456789";

describe("a thread deleted with turns on it", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: SECRET, HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" } });
  });
  afterAll(() => t.stop());

  const post = async (path: string, json: unknown) => {
    const res = await t.api(path, { method: "POST", json });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** Starts a turn on the thread that stays at the model until the thread goes. */
  async function busy(threadId: string) {
    const n = t.llm.chatRequests().length;
    t.llm.enqueue({ hang: true });
    const running = await post("/api/chat/send", { content: "take your time", thread_id: threadId });
    expect(running.status).toBe(202);
    await t.llm.waitForRequests(n + 1);
    return { running: running.body.response_id as string, requests: n + 1 };
  }

  test("Responses, /api/chat and /api/chat/send: the running turn and those waiting fail with not_found", async () => {
    const first = await post("/api/chat", { message: "a thread to delete" });
    const threadId = first.body.thread_id;
    const events = await chatEvents(t);
    const { running, requests } = await busy(threadId);

    const watch = watchBegins(t);
    const waitingResponse = post("/api/v1/responses", { model: "m", input: "waiting (responses)", previous_response_id: first.body.response_id });
    const waitingChat = post("/api/chat", { message: "waiting (chat)", thread_id: threadId });
    const waitingSend = post("/api/chat/send", { content: "waiting (send)", thread_id: threadId });
    await watch.until(3);
    watch.restore();

    expect((await t.api(`/api/chat/threads/${threadId}`, { method: "DELETE" })).status).toBe(204);
    const notFound = { code: "not_found", message: "The conversation was deleted." };
    expect(await events.until((e) => e.type === "turn.completed" && e.response_id === running)).toMatchObject({ status: "failed", error: notFound });
    expect((await waitingResponse).body).toMatchObject({ status: "failed", error: { code: "not_found" } });
    expect((await waitingChat).body).toMatchObject({ status: "failed", error: notFound, response: "" });
    const send = await waitingSend;
    expect(send.status).toBe(202);
    expect(await events.until((e) => e.type === "turn.completed" && e.response_id === send.body.response_id)).toMatchObject({ status: "failed", error: notFound });
    await events.close();
    // only the running turn was at the model; the thread and all of its responses are gone
    expect(t.llm.chatRequests()).toHaveLength(requests);
    expect((await t.api(`/api/chat/history?thread_id=${threadId}`)).status).toBe(404);
    for (const id of [first.body.response_id, running, send.body.response_id]) expect((await t.api(`/api/v1/responses/${id}`)).status).toBe(404);
  });

  test("a webhook job waiting for the thread fails with not_found, and its record says so", async () => {
    const webhook = (body: unknown) =>
      fetch(`${t.service.webhookUrl}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-webhook-secret": SECRET }, body: JSON.stringify(body) }).then(
        (r) => r.json() as Promise<any>,
      );
    const first = await finished(t, (await webhook({ user_id: "erin", message: "first", conversation_id: "to-delete" })).job_id);
    expect(first.status).toBe("completed");
    const { requests } = await busy(first.threadId!);

    const watch = watchBegins(t);
    const waiting = await webhook({ user_id: "erin", message: "second", conversation_id: "to-delete" });
    await watch.until(1);
    watch.restore();
    expect((await t.api(`/api/chat/threads/${first.threadId}`, { method: "DELETE" })).status).toBe(204);

    const job = await finished(t, waiting.job_id);
    expect(job).toMatchObject({ status: "failed", error: { code: "not_found" } });
    expect(t.llm.chatRequests()).toHaveLength(requests);
  });
});
