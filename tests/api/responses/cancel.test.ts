// POST /api/v1/responses/{id}/cancel: cancels an in-flight (streamed) turn.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";
import { openStream } from "../../support/responses-stream";

async function cancel(t: TestService, id: string, token?: string) {
  const res = await t.api(`/api/v1/responses/${id}/cancel`, { method: "POST", token });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

function expectEnvelope(r: { status: number; body: any }, status: number, type: string) {
  expect(r.status).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.type).toBe(type);
  expect(typeof r.body.error.message).toBe("string");
}

describe("cancel", () => {
  let t: TestService;
  let member: { token: string };
  beforeAll(async () => {
    t = await startTestService();
    member = await t.createUser("member");
  });
  afterAll(() => t.stop());

  test("cancels an in-flight streamed turn: reply failed/cancelled/reborn, stream ends with response.failed", async () => {
    t.llm.enqueue({ hang: true });
    const n = t.llm.chatRequests().length;
    const stream = await openStream(t, { model: "gpt-4o", input: "a long job" });
    const created = await stream.until("response.created");
    const id = created.data.response.id as string;
    expect(created.event).toBe("response.created");
    expect(created.data.response.status).toBe("in_progress");
    await t.llm.waitForRequests(n + 1); // the turn is at the model now

    const r = await cancel(t, id);
    expect(r.status).toBe(200);
    expect(r.body.object).toBe("response");
    expect(r.body.id).toBe(id);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("cancelled");
    expect(typeof r.body.error.message).toBe("string");
    expect(r.body.model).toBe("reborn");

    const rest = await stream.rest();
    const last = rest.at(-1)!;
    expect(last.event).toBe("response.failed");
    expect(last.data.type).toBe("response.failed");
    expect(last.data.response.id).toBe(id);
    expect(last.data.response.status).toBe("failed");
    expect(last.data.response.error.code).toBe("cancelled");
    expect(stream.seen.some((e) => e.data.type === "response.completed")).toBe(false);

    // stored as failed
    const got = await t.api(`/api/v1/responses/${id}`);
    const stored = (await got.json()) as any;
    expect(stored.status).toBe("failed");
    expect(stored.error.code).toBe("cancelled");

    // cancelling it again: it is finished now
    expectEnvelope(await cancel(t, id), 400, "invalid_request_error");

    // the thread goes on
    t.llm.enqueue({ text: "Picking up again." });
    const next = await t.respond({ model: "m", input: "try again", previous_response_id: id });
    expect(next.body.status).toBe("completed");
    expect(next.body.output[0].content[0].text).toBe("Picking up again.");
  });

  test("cancels a turn that already streamed text; the partial answer is not completed", async () => {
    // the first step streams text and calls a tool; the next model step never finishes
    t.llm.enqueue({ text: "Working on it.", toolCalls: [{ name: "unregistered_builtin", arguments: {} }] }, { hang: true });
    const n = t.llm.chatRequests().length;
    const stream = await openStream(t, { model: "m", input: "go" });
    const id = (await stream.until("response.created")).data.response.id as string;
    await stream.until("response.output_item.done");
    await t.llm.waitForRequests(n + 2);
    const r = await cancel(t, id);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("cancelled");
    expect(r.body.model).toBe("reborn");
    const last = (await stream.rest()).at(-1)!;
    expect(last.data.type).toBe("response.failed");
    expect(last.data.response.output.map((o: any) => o.content[0].text)).toEqual(["Working on it."]);
  });

  test("cancel of a finished response gives 400", async () => {
    const done = await t.respond({ model: "m", input: "quick" });
    expect(done.body.status).toBe("completed");
    expectEnvelope(await cancel(t, done.body.id), 400, "invalid_request_error");
    // still completed
    const got = (await (await t.api(`/api/v1/responses/${done.body.id}`)).json()) as any;
    expect(got.status).toBe("completed");
  });

  test("cancel of an unknown or malformed id gives 404", async () => {
    const unknown = `resp_${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`;
    expectEnvelope(await cancel(t, unknown), 404, "not_found_error");
    expectEnvelope(await cancel(t, "resp_nope"), 404, "not_found_error");
  });

  test("another user's response gives 404, in flight or finished, and is not cancelled", async () => {
    const finished = await t.respond({ model: "m", input: "mine" });
    expectEnvelope(await cancel(t, finished.body.id, member.token), 404, "not_found_error");

    t.llm.enqueue({ hang: true });
    const n = t.llm.chatRequests().length;
    const stream = await openStream(t, { model: "m", input: "owner's long job" });
    const id = (await stream.until("response.created")).data.response.id as string;
    await t.llm.waitForRequests(n + 1);
    const theirs = await cancel(t, id, member.token);
    expectEnvelope(theirs, 404, "not_found_error");
    expect(JSON.stringify(theirs.body)).not.toContain("long job");

    // the owner's turn is still running: the owner can cancel it
    const mine = await cancel(t, id);
    expect(mine.status).toBe(200);
    expect(mine.body.error.code).toBe("cancelled");
    expect((await stream.rest()).at(-1)!.data.type).toBe("response.failed");
  });

  test("cancel needs a token", async () => {
    const res = await t.api(`/api/v1/responses/resp_${"a".repeat(64)}/cancel`, { method: "POST", token: null });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe("Invalid or missing auth token");
  });
});
