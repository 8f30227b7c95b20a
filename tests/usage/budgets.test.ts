// Budgets: per-user daily and monthly ones set by admins, the instance's monthly one; a turn
// that would start over a budget fails at once with budget_exceeded, whatever its channel;
// passing 80 % is logged and shown on the user's chat event stream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";
import { chatEvents } from "../support/chat-events";
import { until } from "../support/until";

const patchUser = (t: TestService, id: string, json: unknown) => t.api(`/api/webchat/v2/admin/users/${id}`, { method: "PATCH", json });
const costing = (cost: number) => ({ text: `Cost ${cost}.`, usage: { prompt_tokens: 10, completion_tokens: 5, cost } });

describe("a user's budgets", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: "budget-secret-0123456789", HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" } });
  });
  afterAll(() => t.stop());

  test("admins set them on the user record; bad amounts are 400 and change nothing", async () => {
    const { user } = await t.createUser("member");
    expect(user.budget).toEqual({ daily_usd: null, monthly_usd: null });
    for (const budget of [{ daily_usd: -1 }, { daily_usd: "5" }, { weekly_usd: 5 }, 5]) {
      const r = await patchUser(t, user.user_id, { budget });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.type).toBe("invalid_request_error");
    }
    const set = await patchUser(t, user.user_id, { budget: { daily_usd: 2.5, monthly_usd: 40 } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as any).budget).toEqual({ daily_usd: 2.5, monthly_usd: 40 });
    const cleared = (await (await patchUser(t, user.user_id, { budget: { daily_usd: null } })).json()) as any;
    expect(cleared.budget).toEqual({ daily_usd: null, monthly_usd: 40 });
    const member = await t.createUser("member");
    const byMember = await t.api(`/api/webchat/v2/admin/users/${user.user_id}`, { method: "PATCH", json: { budget: { daily_usd: 1 } }, token: member.token });
    expect(byMember.status).toBe(403);
  });

  test("a warning at 80 %, then a turn over the budget fails at once, on every channel", async () => {
    const { token, user } = await t.createUser("member");
    expect((await patchUser(t, user.user_id, { budget: { daily_usd: 1 } })).status).toBe(200);
    const stream = await chatEvents(t, token);
    t.llm.enqueue(costing(0.5), costing(0.35), costing(0.2));
    expect((await t.respond({ model: "m", input: "one" }, token)).body.status).toBe("completed");
    const two = await t.respond({ model: "m", input: "two" }, token);
    // 0.85 of 1.00: past 80 %
    const warning = await stream.until((e) => e.type === "budget.warning");
    expect(warning).toMatchObject({ response_id: two.body.id, message: expect.stringContaining("85 %") });
    expect(t.logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "budget")).toMatchObject({ level: "warn", user_id: user.user_id, period: "day" });
    expect((await t.respond({ model: "m", input: "three" }, token)).body.status).toBe("completed");
    // 1.05 spent: nothing more starts today
    const asked = t.llm.chatRequests().length;
    const over = await t.respond({ model: "m", input: "four" }, token);
    expect(over.status).toBe(200);
    expect(over.body).toMatchObject({ status: "failed", error: { code: "budget_exceeded", type: "rate_limit_error" } });
    expect(over.body.error.message).toContain("daily budget of $1.00");
    const chat = (await (await t.api("/api/chat", { method: "POST", json: { message: "five" }, token })).json()) as any;
    expect(chat).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
    expect(t.llm.chatRequests()).toHaveLength(asked);
    // the owner has no budget of their own and no instance budget is set
    t.llm.enqueue(costing(0.01));
    expect((await t.respond({ model: "m", input: "owner" })).body.status).toBe("completed");
    // what the web UI shows: the budget and what was spent
    const usage = (await (await t.api("/api/usage", { token })).json()) as any;
    expect(usage.budgets).toEqual([{ scope: "user", period: "day", limit_usd: 1, spent_usd: expect.closeTo(1.05, 9) }]);
    // raised by an admin: turns run again
    expect((await patchUser(t, user.user_id, { budget: { daily_usd: 10 } })).status).toBe(200);
    t.llm.enqueue(costing(0.01));
    expect((await t.respond({ model: "m", input: "six" }, token)).body.status).toBe("completed");
    await stream.close();
  });

  test("a webhook job over the instance owner's budget fails with budget_exceeded", async () => {
    expect((await patchUser(t, "owner", { budget: { monthly_usd: 0 } })).status).toBe(200);
    try {
      const asked = t.llm.chatRequests().length;
      const res = await fetch(`${t.service.webhookUrl}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-webhook-secret": "budget-secret-0123456789" },
        body: JSON.stringify({ user_id: "ha", message: "over budget" }),
      });
      const { job_id } = (await res.json()) as any;
      const job = await until("the job to finish", async () => {
        const job: any = await (await fetch(`${t.service.webhookUrl}/jobs/${job_id}`, { headers: { "x-webhook-secret": "budget-secret-0123456789" } })).json();
        return (job.status === "failed" || job.status === "completed") && job;
      });
      expect(job).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
      expect(t.llm.chatRequests()).toHaveLength(asked);
    } finally {
      await patchUser(t, "owner", { budget: { monthly_usd: null } });
    }
  });
});

describe("the instance's monthly budget", () => {
  test("spent by anyone, it stops everyone's turns", async () => {
    const t = await startTestService({ env: { BUDGET_MONTHLY_USD: "1" } });
    try {
      const member = await t.createUser("member");
      t.llm.enqueue(costing(0.6), costing(0.6));
      expect((await t.respond({ model: "m", input: "a" }, member.token)).body.status).toBe("completed");
      expect((await t.respond({ model: "m", input: "b" })).body.status).toBe("completed");
      const usage = (await (await t.api("/api/usage")).json()) as any;
      expect(usage.budgets).toEqual([{ scope: "instance", period: "month", limit_usd: 1, spent_usd: expect.closeTo(1.2, 9) }]);
      for (const token of [member.token, undefined]) {
        const r = await t.respond({ model: "m", input: "c" }, token);
        expect(r.body).toMatchObject({ status: "failed", error: { code: "budget_exceeded", message: expect.stringContaining("instance's monthly budget") } });
      }
    } finally {
      await t.stop();
    }
  });
});
