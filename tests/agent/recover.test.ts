// A stored turn gone on with (input `recover`, as a webhook job run again after a stop does):
// one that had completed is answered as stored, with nothing run; one cut short mid-answer is
// asked for again without its partial answer, under its own id; another user's is not found.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { threadOfResponse } from "../../src/conversation/ids";
import { ThreadNotFound } from "../../src/errors";
import { OWNER_ID } from "../../src/store/users";
import { startTestService, type TestService } from "../support/harness";
import { openStream } from "../support/responses-stream";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const recover = (responseId: string, userId = OWNER_ID) =>
  t.service.services.agent.run({ channel: "webhook", userId, model: "default", background: true, input: { kind: "recover", responseId } });

test("a turn that had completed: its stored result, the model not asked", async () => {
  t.llm.enqueue({ text: "Stored answer." });
  const { body } = await t.respond({ model: "m", input: "hello" });
  expect(body.status).toBe("completed");
  const asked = t.llm.requests.length;

  const result = await recover(body.id);
  expect(result).toMatchObject({ id: body.id, status: "completed", error: null });
  expect(result.output).toEqual([expect.objectContaining({ type: "message", role: "assistant", content: "Stored answer." })]);
  expect(t.llm.requests.length).toBe(asked);
});

test("another user's response is not found, and nothing runs", async () => {
  t.llm.enqueue({ text: "Mine." });
  const { body } = await t.respond({ model: "m", input: "hello" });
  const asked = t.llm.requests.length;
  await expect(recover(body.id, "someone-else")).rejects.toBeInstanceOf(ThreadNotFound);
  expect(t.llm.requests.length).toBe(asked);
});

test("a turn cut short mid-answer: asked again without the partial answer, completed under its own id", async () => {
  t.llm.enqueue({ text: Array.from({ length: 300 }, (_, i) => `word${i}`).join(" "), chunkDelayMs: 10 });
  const stream = await openStream(t, { model: "m", input: "tell me everything" });
  const id = (await stream.until("response.created")).data.response.id as string;
  await stream.deltas(5);
  await t.api(`/api/v1/responses/${id}/cancel`, { method: "POST" });
  await stream.rest();

  t.llm.enqueue({ text: "The whole answer." });
  const result = await recover(id);
  expect(result).toMatchObject({ id, threadId: threadOfResponse(id), status: "completed" });
  const asked = t.llm.requests.at(-1)!.body.messages as { role: string; content: string }[];
  expect(asked.filter((m) => m.role !== "system")).toEqual([{ role: "user", content: "tell me everything" }]);
  const stored = (await (await t.api(`/api/v1/responses/${id}`)).json()) as any;
  expect(stored.status).toBe("completed");
  expect(stored.output.map((o: any) => o.content[0].text)).toEqual(["The whole answer."]);
});
