// Two requests on one thread at once: the second waits for the first; nothing is lost or mixed.
// Requests on different threads do not wait for each other.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { loadItems } from "../../src/store/conversations";
import { startTestService, type TestService } from "../support/harness";
import { watchBegins } from "../support/agent-watch";

const threadUuid = (id: string) => {
  const h = id.slice(37);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

const lastUser = (body: any): string => (body.messages as any[]).findLast((m) => m.role === "user")?.content ?? "";
const dialogue = (body: any) => (body.messages as any[]).filter((m) => m.role !== "system").map((m) => `${m.role}: ${m.content}`);

/** A promise with its resolve function. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

/** Reads a streamed response until `response.created` and returns the id; the rest is read on demand. */
async function startStream(t: TestService, body: Record<string, unknown>) {
  const res = await t.api("/api/v1/responses", { method: "POST", json: { ...body, stream: true } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const events: any[] = [];
  const pump = async () => {
    for (;;) {
      let end: number;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n");
        if (data) return JSON.parse(data);
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buf += decoder.decode(value, { stream: true });
    }
  };
  const created = await pump();
  expect(created.type).toBe("response.created");
  events.push(created);
  return {
    id: created.response.id as string,
    async finish() {
      for (let ev = await pump(); ev; ev = await pump()) events.push(ev);
      return events.at(-1);
    },
  };
}

describe("concurrent requests", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterEach(() => t.llm.respondWith(null));
  afterAll(() => t.stop());

  test("two requests on one thread: the second waits for the first (delayed model step)", async () => {
    t.llm.enqueue({ text: "Seed answer." });
    const seed = await t.respond({ model: "m", input: "seed" });
    expect(seed.body.status).toBe("completed");

    const n = t.llm.chatRequests().length;
    t.llm.enqueue({ text: "First answer.", delayMs: 400 }, { text: "Second answer." });
    const first = t.respond({ model: "m", input: "first question", previous_response_id: seed.body.id });
    await t.llm.waitForRequests(n + 1); // the first turn is at the model, answering slowly
    const second = t.respond({ model: "m", input: "second question", previous_response_id: seed.body.id });
    const [r1, r2] = await Promise.all([first, second]);

    expect(r1.status).toBe(200);
    expect(r2.status).toBe(200);
    expect(r1.body.status).toBe("completed");
    expect(r2.body.status).toBe("completed");
    expect(r1.body.output[0].content[0].text).toBe("First answer.");
    expect(r2.body.output[0].content[0].text).toBe("Second answer.");

    // the second turn ran after the first had finished, and saw it
    const chats = t.llm.chatRequests();
    expect(chats).toHaveLength(n + 2);
    expect(lastUser(chats[n]!.body)).toBe("first question");
    expect(dialogue(chats[n + 1]!.body)).toEqual([
      "user: seed",
      "assistant: Seed answer.",
      "user: first question",
      "assistant: First answer.",
      "user: second question",
    ]);

    // stored in order, not interleaved
    const stored = await loadItems(t.service.services.db, threadUuid(seed.body.id));
    expect(stored.map((i) => (i.type === "message" ? `${i.role}: ${i.content}` : i.type))).toEqual([
      "user: seed",
      "assistant: Seed answer.",
      "user: first question",
      "assistant: First answer.",
      "user: second question",
      "assistant: Second answer.",
    ]);
    expect(new Set([seed.body.id, r1.body.id, r2.body.id].map((id) => id.slice(37))).size).toBe(1);
  });

  test("the second request is held until the first turn is committed (gated model step)", async () => {
    const watch = watchBegins(t);
    try {
      const seed = await t.respond({ model: "m", input: "seed two" });
      const gate = latch();
      t.llm.respondWith(async (body) => {
        if (lastUser(body) === "slow one") {
          await gate.opened;
          return { text: "Slow answer." };
        }
        return { text: `Answer to ${lastUser(body)}.` };
      });
      const n = t.llm.chatRequests().length;
      const begun = watch.entered;
      const first = t.respond({ model: "m", input: "slow one", previous_response_id: seed.body.id });
      await t.llm.waitForRequests(n + 1);
      const second = t.respond({ model: "m", input: "quick one", previous_response_id: seed.body.id });
      await watch.until(begun + 2); // the second request is inside the service, waiting on the thread
      expect(t.llm.chatRequests()).toHaveLength(n + 1);
      gate.open();
      const [r1, r2] = await Promise.all([first, second]);
      expect(r1.body.status).toBe("completed");
      expect(r2.body.status).toBe("completed");
      expect(r2.body.output[0].content[0].text).toBe("Answer to quick one.");
      expect(dialogue(t.llm.lastChat())).toEqual([
        "user: seed two",
        "assistant: You said: seed two",
        "user: slow one",
        "assistant: Slow answer.",
        "user: quick one",
      ]);
      const stored = await loadItems(t.service.services.db, threadUuid(seed.body.id));
      expect(stored.filter((i) => i.type === "message").map((i) => (i as any).content)).toEqual([
        "seed two",
        "You said: seed two",
        "slow one",
        "Slow answer.",
        "quick one",
        "Answer to quick one.",
      ]);
    } finally {
      watch.restore();
    }
  });

  test("requests on different threads do not wait for each other", async () => {
    const gate = latch();
    t.llm.respondWith(async (body) => {
      if (lastUser(body) === "blocked thread") {
        await gate.opened;
        return { text: "Unblocked." };
      }
      return { text: "Free." };
    });
    const n = t.llm.chatRequests().length;
    const a = await t.respond({ model: "m", input: "thread a" });
    const b = await t.respond({ model: "m", input: "thread b" });
    const blocked = t.respond({ model: "m", input: "blocked thread", previous_response_id: a.body.id });
    await t.llm.waitForRequests(n + 3);
    // thread b and a brand-new thread complete while thread a is busy
    const onB = await t.respond({ model: "m", input: "on b", previous_response_id: b.body.id });
    const fresh = await t.respond({ model: "m", input: "new thread" });
    expect(onB.body.status).toBe("completed");
    expect(onB.body.output[0].content[0].text).toBe("Free.");
    expect(fresh.body.status).toBe("completed");
    gate.open();
    const r = await blocked;
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Unblocked.");
  });

  test("a follow-up sent while a new thread's first turn still streams waits for it", async () => {
    const watch = watchBegins(t);
    try {
      const gate = latch();
      t.llm.respondWith(async (body) => {
        if (lastUser(body) === "opening question") {
          await gate.opened;
          return { text: "Opening answer." };
        }
        return { text: `Answer to ${lastUser(body)}.` };
      });
      const n = t.llm.chatRequests().length;
      const begun = watch.entered;
      const stream = await startStream(t, { model: "m", input: "opening question" });
      await t.llm.waitForRequests(n + 1);
      const follow = t.respond({ model: "m", input: "follow-up", previous_response_id: stream.id });
      await watch.until(begun + 2);
      gate.open();
      const last = await stream.finish();
      expect(last.type).toBe("response.completed");
      const r = await follow;
      expect(r.status).toBe(200);
      expect(r.body.error).toBeNull();
      expect(r.body.status).toBe("completed");
      expect(r.body.output[0].content[0].text).toBe("Answer to follow-up.");
      expect(dialogue(t.llm.lastChat())).toEqual(["user: opening question", "assistant: Opening answer.", "user: follow-up"]);
    } finally {
      watch.restore();
    }
  });
});
