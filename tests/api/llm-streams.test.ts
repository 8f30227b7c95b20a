// llm.maxConcurrent on the running service: streamed turns past the limit wait for a free
// slot, GET /api/status counts them, one log line says the wait began and one that it ended,
// and the waiting turn goes on when a stream ends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";

describe("the limit on LLM streams", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { LLM_MAX_CONCURRENT: "2" } });
  });
  afterAll(() => t.stop());

  const streams = async () => ((await (await t.api("/api/status")).json()) as any).llm.streams;

  test("a third streamed turn waits, is counted and logged, and goes on when a stream ends", async () => {
    const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    t.llm.enqueue(...gates.map((g, i) => ({ text: `answer ${i} in several words`, holdUntil: g.promise })));
    const turn = async (i: number) => {
      const res = await t.api("/api/v1/responses", { method: "POST", json: { model: "default", input: `question ${i}`, stream: true } });
      const body = await res.text();
      return body.includes("response.completed") ? "completed" : body;
    };
    const turns = [turn(0), turn(1)];
    await t.llm.waitForTextChunks(2);
    expect(await streams()).toEqual({ limit: 2, active: 2, waiting: 0 });
    turns.push(turn(2));
    for (let i = 0; (await streams()).waiting === 0; i++) if (i > 500) throw new Error("the third turn never waited");
    expect(await streams()).toEqual({ limit: 2, active: 2, waiting: 1 });
    expect(t.llm.chatRequests().length).toBe(2);
    expect(t.logs.filter((m) => m.startsWith("LLM streams at their limit"))).toHaveLength(1);

    gates[0]!.resolve();
    await t.llm.waitForRequests(3);
    gates[1]!.resolve();
    gates[2]!.resolve();
    expect(await Promise.all(turns)).toEqual(["completed", "completed", "completed"]);
    expect(await streams()).toEqual({ limit: 2, active: 0, waiting: 0 });
    expect(t.logs.filter((m) => m.startsWith("LLM streams at their limit"))).toHaveLength(1);
    const end = t.logLines.map((l) => JSON.parse(l)).filter((r) => r.msg.startsWith("LLM streams below their limit"));
    expect(end).toEqual([expect.objectContaining({ limit: 2, waited: 1, most_waiting: 1 })]);
  });
});
