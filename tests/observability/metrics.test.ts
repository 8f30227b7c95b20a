// GET /metrics: off unless METRICS_ENABLED, behind METRICS_TOKEN or the instance token, in the
// Prometheus text format, with the series the contract lists, fed by the agent's bus.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, TOKEN, type TestService } from "../support/harness";
import { until } from "../support/until";

const scrape = async (t: TestService, token: string | null = TOKEN) => {
  const res = await t.api("/metrics", { token });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
};

/** The value of one series, labels as written (sorted by prom-client as declared). */
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("off by default: /metrics is not there", async () => {
  const t = await startTestService();
  try {
    expect((await scrape(t)).status).toBe(404);
  } finally {
    await t.stop();
  }
});

describe("with METRICS_ENABLED", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({
      env: { METRICS_ENABLED: "true", METRICS_TOKEN: "scraper-token-0123456789" },
      config: { llm: { prices: { "scripted-model": { input_per_mtok: 1000, output_per_mtok: 2000 } } } },
    });
  });
  afterAll(() => t.stop());

  test("a wrong or missing token gets the plain-text 401; METRICS_TOKEN and the instance token are let in", async () => {
    for (const token of [null, "wrong"]) {
      const r = await scrape(t, token);
      expect(r.status).toBe(401);
      expect(r.text).toBe("Invalid or missing auth token");
    }
    const member = await t.createUser("member");
    expect((await scrape(t, member.token)).status).toBe(401);
    for (const token of ["scraper-token-0123456789", TOKEN]) {
      const r = await scrape(t, token);
      expect(r.status).toBe(200);
      expect(r.type).toContain("text/plain");
      expect(r.text).toContain("# TYPE service_turns_total counter");
    }
  });

  test("turns, their duration and first token, LLM requests, tokens, cost, tool calls, jobs, MCP servers and memory", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "memory_search", arguments: { query: "anything" } }], usage: { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 4 } } } as any,
      { text: "Found nothing.", usage: { prompt_tokens: 200, completion_tokens: 20 } },
      { error: { status: 400, message: "bad request" } },
    );
    expect((await t.respond({ model: "m", input: "search" })).body.status).toBe("completed");
    expect((await t.respond({ model: "m", input: "fail" })).body.status).toBe("failed");
    const { text } = await scrape(t);
    expect(value(text, 'service_turns_total{channel="responses",status="completed"}')).toBe(1);
    expect(value(text, 'service_turns_total{channel="responses",status="failed"}')).toBe(1);
    expect(value(text, 'service_turn_duration_seconds_count{channel="responses"}')).toBe(2);
    expect(value(text, 'service_turn_duration_seconds_bucket{le="+Inf",channel="responses"}')).toBe(2);
    expect(value(text, 'service_time_to_first_token_seconds_count{channel="responses"}')).toBe(1);
    expect(value(text, 'service_llm_requests_total{model="scripted-model",outcome="ok"}')).toBe(2);
    expect(value(text, 'service_llm_requests_total{model="scripted-model",outcome="error"}')).toBe(1);
    expect(value(text, 'service_llm_tokens_total{model="scripted-model",type="input"}')).toBe(300);
    expect(value(text, 'service_llm_tokens_total{model="scripted-model",type="cached"}')).toBe(40);
    expect(value(text, 'service_llm_tokens_total{model="scripted-model",type="output"}')).toBe(30);
    expect(value(text, 'service_llm_tokens_total{model="scripted-model",type="reasoning"}')).toBe(4);
    expect(value(text, 'service_llm_cost_usd_total{model="scripted-model"}')).toBeCloseTo((300 * 1000 + 30 * 2000) / 1e6, 9);
    expect(value(text, 'service_tool_calls_total{tool="memory_search",outcome="ok"}')).toBe(1);
    for (const status of ["queued", "running", "completed", "failed"]) expect(value(text, `service_jobs{status="${status}"}`)).toBe(0);
    for (const state of ["starting", "ready", "restarting", "failed"]) expect(value(text, `service_mcp_servers{state="${state}"}`)).toBe(0);
    expect(text).toContain("# TYPE service_job_queue_wait_seconds histogram");
    expect(text).toContain("# TYPE service_routine_runs_total counter");
    expect(value(text, "process_resident_memory_bytes")).toBeGreaterThan(1e6);
    expect(value(text, "process_heap_used_bytes")).toBeGreaterThan(1e5);
  });

  test("a chat turn counts under its own channel", async () => {
    await t.api("/api/chat", { method: "POST", json: { message: "hello" } });
    expect(value((await scrape(t)).text, 'service_turns_total{channel="chat",status="completed"}')).toBe(1);
  });
});

test("a webhook job: its queue wait, its turn under the webhook channel, the jobs by status", async () => {
  const secret = "metrics-webhook-secret-0123456789";
  const t = await startTestService({ env: { METRICS_ENABLED: "true", HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: secret, HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" } });
  try {
    const res = await fetch(`${t.service.webhookUrl}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-webhook-secret": secret },
      body: JSON.stringify({ user_id: "sensor", message: "status?" }),
    });
    const { job_id } = (await res.json()) as any;
    await until("the job to complete", async () => ((await (await fetch(`${t.service.webhookUrl}/jobs/${job_id}`, { headers: { "x-webhook-secret": secret } })).json()) as any).status === "completed");
    const { text } = await scrape(t);
    expect(value(text, "service_job_queue_wait_seconds_count")).toBe(1);
    expect(value(text, 'service_turns_total{channel="webhook",status="completed"}')).toBe(1);
    expect(value(text, 'service_jobs{status="completed"}')).toBe(1);
  } finally {
    await t.stop();
  }
});
