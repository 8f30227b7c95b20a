// What turns cost: each turn's input, cached, output and reasoning tokens and its cost, priced
// from llm.prices or taken from the provider (OpenRouter's usage.cost), stored by the model
// that answered; usage.cost_usd on retrieval; GET /api/usage grouped five ways; service usage.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestService, TOKEN, type TestService } from "../support/harness";
import { chatEvents } from "../support/chat-events";
import { startScriptedLLM } from "../support/scripted-llm";

const PRICES = {
  "scripted-model": { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 },
  "fallback-model": { input_per_mtok: 1, output_per_mtok: 1 },
};
const usageOf = async (t: TestService, query: string, token?: string) => {
  const res = await t.api(`/api/usage?${query}`, { token });
  return { status: res.status, body: (await res.json()) as any };
};

describe("turn usage and cost", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ config: { llm: { prices: PRICES } } });
  });
  afterAll(() => t.stop());

  test("tokens with their details, priced from llm.prices, on the response and in /api/usage", async () => {
    const before = (await usageOf(t, "group_by=model")).body.total;
    // 1,000 input of which 400 cached, 300 output of which 120 reasoning
    t.llm.enqueue({ text: "Priced.", usage: { prompt_tokens: 1000, completion_tokens: 300, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 120 } } });
    const r = await t.respond({ model: "gpt-hint", input: "price me" });
    expect(r.body.status).toBe("completed");
    const expected = (600 * 2 + 400 * 0.5 + 300 * 10) / 1e6;
    expect(r.body.usage).toMatchObject({
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 400 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 120 },
      total_tokens: 1300,
    });
    const got = (await (await t.api(`/api/v1/responses/${r.body.id}`)).json()) as any;
    expect(got.usage.cost_usd).toBeCloseTo(expected, 9);
    expect(got.usage.input_tokens_details.cached_tokens).toBe(400);
    expect(got.usage.output_tokens_details.reasoning_tokens).toBe(120);
    const after = (await usageOf(t, "group_by=model")).body;
    expect(after.total.turns - before.turns).toBe(1);
    expect(after.total.cost_usd - before.cost_usd).toBeCloseTo(expected, 9);
    // the model that answered, as priced: never the caller's routing hint
    expect(after.rows.map((row: any) => row.key)).toContain("scripted-model");
    expect(after.rows.map((row: any) => row.key)).not.toContain("gpt-hint");
  });

  test("a cost the provider reports (OpenRouter's usage.cost) wins over the configured prices", async () => {
    t.llm.enqueue({ text: "Reported.", usage: { prompt_tokens: 10, completion_tokens: 5, cost: 0.0123 } });
    const r = await t.respond({ model: "m", input: "openrouter style" });
    const got = (await (await t.api(`/api/v1/responses/${r.body.id}`)).json()) as any;
    expect(got.usage.cost_usd).toBeCloseTo(0.0123, 9);
  });

  test("grouped by day, channel and user; a turn with store: false counts; deleting its thread refunds nothing", async () => {
    const before = (await usageOf(t, "group_by=channel")).body;
    t.llm.enqueue(
      { text: "Unstored.", usage: { prompt_tokens: 100, completion_tokens: 10, cost: 0.5 } },
      { text: "Chat.", usage: { prompt_tokens: 100, completion_tokens: 10, cost: 0.25 } },
    );
    const unstored = await t.respond({ model: "m", input: "forget me", store: false });
    expect(unstored.body.status).toBe("completed");
    const chat = await t.api("/api/chat", { method: "POST", json: { message: "hi" } });
    const { thread_id } = (await chat.json()) as any;
    expect((await t.api(`/api/chat/threads/${thread_id}`, { method: "DELETE" })).status).toBe(204);
    const after = (await usageOf(t, "group_by=channel")).body;
    const cost = (body: any, key: string) => body.rows.find((row: any) => row.key === key)?.cost_usd ?? 0;
    expect(cost(after, "responses") - cost(before, "responses")).toBeCloseTo(0.5, 9);
    expect(cost(after, "chat") - cost(before, "chat")).toBeCloseTo(0.25, 9);
    const byDay = (await usageOf(t, "group_by=day")).body;
    const d = new Date();
    const today = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
    expect(byDay.rows.map((row: any) => row.key)).toEqual([today]);
    expect(byDay.rows[0].cost_usd).toBeCloseTo(after.total.cost_usd, 9);
    const byUser = (await usageOf(t, "group_by=user")).body;
    expect(byUser.rows.map((row: any) => row.key)).toEqual(["owner"]);
    // no routine ran: one row without a key
    expect((await usageOf(t, "group_by=routine")).body.rows.map((row: any) => row.key)).toEqual([null]);
  });

  test("a member sees their own usage only; an admin sees everyone's and can pick a user", async () => {
    const member = await t.createUser("member");
    t.llm.enqueue({ text: "Member's.", usage: { prompt_tokens: 7, completion_tokens: 3, cost: 0.07 } });
    const r = await t.respond({ model: "m", input: "mine" }, member.token);
    expect(r.body.status).toBe("completed");
    const mine = await usageOf(t, "group_by=user", member.token);
    expect(mine.status).toBe(200);
    expect(mine.body.rows).toEqual([{ key: member.user.user_id, turns: 1, input_tokens: 7, cached_tokens: 0, output_tokens: 3, reasoning_tokens: 0, cost_usd: 0.07 }]);
    expect((await usageOf(t, "user_id=owner", member.token)).status).toBe(403);
    const all = (await usageOf(t, "group_by=user")).body;
    expect(all.rows.map((row: any) => row.key).sort()).toEqual([member.user.user_id, "owner"].sort());
    const one = (await usageOf(t, `group_by=user&user_id=${member.user.user_id}`)).body;
    expect(one.rows.map((row: any) => row.key)).toEqual([member.user.user_id]);
  });

  test("bad queries are 400 with the envelope and say what is wrong", async () => {
    for (const [q, words] of [
      ["group_by=week", "group_by"],
      ["from=yesterday", "from"],
      ["from=2026-12-02&to=2026-12-01", "after"],
    ] as const) {
      const r = await usageOf(t, q);
      expect(r.status).toBe(400);
      expect(r.body.error.type).toBe("invalid_request_error");
      expect(r.body.error.message).toContain(words);
    }
    const past = await usageOf(t, "from=2001-01-01&to=2001-01-31");
    expect(past.body).toMatchObject({ rows: [], total: { turns: 0, cost_usd: 0 } });
  });

  test("service usage prints the same report from the database", async () => {
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/main.ts"), "usage", "--by", "model", "--json", "--home", t.home], {
      env: { PATH: process.env.PATH ?? "", HOME: t.home },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text(), await proc.exited];
    expect(err).toBe("");
    expect(code).toBe(0);
    const printed = JSON.parse(out);
    const api = (await usageOf(t, "group_by=model")).body;
    expect(printed.total).toEqual(api.total);
    const text = Bun.spawnSync(["bun", join(import.meta.dir, "../../src/main.ts"), "usage", "--by", "channel", "--home", t.home], { env: { PATH: process.env.PATH ?? "", HOME: t.home } });
    expect(text.stdout.toString()).toMatch(/^channel\s+turns\s+input\s+cached\s+output\s+reasoning\s+cost$/m);
    expect(text.stdout.toString()).toMatch(/^total\s+\d+/m);
    const bad = Bun.spawnSync(["bun", join(import.meta.dir, "../../src/main.ts"), "usage", "--by", "week", "--home", t.home], { env: { PATH: process.env.PATH ?? "", HOME: t.home } });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain("group_by");
  });
});

describe("the model that answered", () => {
  test("a fallback that answers is what the turn is priced and reported as", async () => {
    // the primary answers 503 every time; the scripted LLM answers as the fallback
    const down = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ error: { message: "down" } }, { status: 503 }) });
    const llm = await startScriptedLLM();
    const t = await startTestService({
      llm,
      env: { LLM_BASE_URL: `http://127.0.0.1:${down.port}/v1` },
      config: { llm: { prices: PRICES, fallbacks: [{ baseUrl: llm.url, apiKey: "k", model: "fallback-model" }] } },
    });
    try {
      llm.enqueue({ text: "From the fallback.", usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } });
      const r = await t.respond({ model: "m", input: "who answers?" });
      expect(r.body.status).toBe("completed");
      expect(llm.lastChat().model).toBe("fallback-model");
      const byModel = (await usageOf(t, "group_by=model")).body;
      expect(byModel.rows).toEqual([expect.objectContaining({ key: "fallback-model", cost_usd: 2 })]);
    } finally {
      await t.stop();
      await llm.close();
      down.stop(true);
    }
  });
});

describe("live activity on the chat event stream", () => {
  test("a Responses turn and its events reach the user's /api/chat/events, labelled with its channel", async () => {
    const t = await startTestService();
    try {
      const stream = await chatEvents(t, TOKEN);
      t.llm.enqueue({ text: "Seen in the web UI.", chunks: 3 });
      const r = await t.respond({ model: "m", input: "from the API" });
      const done = await stream.until((e) => e.type === "turn.completed" && e.response_id === r.body.id);
      expect(done).toMatchObject({ status: "completed" });
      const mine = stream.seen.filter((e) => e.response_id === r.body.id);
      expect(mine[0]).toMatchObject({ type: "turn.started", channel: "responses" });
      expect(mine.filter((e) => e.type === "message.delta").map((e) => e.delta).join("")).toBe("Seen in the web UI.");
      await stream.close();
    } finally {
      await t.stop();
    }
  });
});
