// Traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per turn, per LLM
// request and per tool call, with the GenAI semantic conventions, received on loopback.
import { describe, expect, test } from "bun:test";
import { startTestService } from "../support/harness";
import { startOtlpReceiver } from "../support/otlp-receiver";

describe("OpenTelemetry traces", () => {
  test("a turn with a tool call: invoke_agent, chat and execute_tool spans, parented and attributed", async () => {
    const receiver = await startOtlpReceiver();
    const t = await startTestService({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "agent-under-test" } });
    let id: string;
    try {
      t.llm.enqueue(
        { toolCalls: [{ name: "memory_search", arguments: { query: "x" } }] },
        { text: "Done.", usage: { prompt_tokens: 50, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 20 } } },
      );
      const r = await t.respond({ model: "m", input: "trace me" });
      expect(r.body.status).toBe("completed");
      id = r.body.id;
      t.llm.enqueue({ error: { status: 400, message: "refused" } });
      expect((await t.respond({ model: "m", input: "fail" })).body.status).toBe("failed");
    } finally {
      // stopping sends what is still buffered
      await t.stop();
    }
    const turn = await receiver.until((s) => s.name === "invoke_agent service" && s.attributes["gen_ai.response.id"] === id);
    expect(turn.resource["service.name"]).toBe("agent-under-test");
    expect(turn.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "service", "service.channel": "responses", "enduser.id": "owner" });
    expect(turn.parentSpanId).toBeUndefined();
    const mine = receiver.spans.filter((s) => s.traceId === turn.traceId && s !== turn);
    const chats = mine.filter((s) => s.name === "chat scripted-model");
    expect(chats).toHaveLength(2);
    for (const c of chats) {
      expect(c.parentSpanId).toBe(turn.spanId);
      expect(c.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted-model", "gen_ai.provider.name": "openai" });
      expect(c.startNs >= turn.startNs && c.endNs <= turn.endNs).toBe(true);
    }
    expect(chats.find((c) => c.attributes["gen_ai.usage.input_tokens"] === 50)?.attributes["gen_ai.usage.cache_read.input_tokens"]).toBe(20);
    const tool = mine.find((s) => s.name === "execute_tool memory_search");
    expect(tool?.parentSpanId).toBe(turn.spanId);
    expect(tool?.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "memory_search", "gen_ai.tool.type": "function" });
    // the failed turn and its request are errors (status code 2)
    const failed = receiver.spans.find((s) => s.name === "invoke_agent service" && s.attributes["error.type"] === "llm_error");
    expect(failed?.status).toBe(2);
    expect(receiver.spans.find((s) => s.parentSpanId === failed?.spanId && s.name.startsWith("chat"))?.status).toBe(2);
    receiver.close();
  });

  test("unset, nothing of the SDK is loaded and nothing is sent", async () => {
    const t = await startTestService();
    try {
      expect((await t.respond({ model: "m", input: "no traces" })).body.status).toBe("completed");
      expect(t.logs.some((l) => l.startsWith("tracing:"))).toBe(false);
    } finally {
      await t.stop();
    }
  });
});

describe("no cost when off", () => {
  const loaded = (env: Record<string, string>) => {
    const out = Bun.spawnSync(["bun", `${import.meta.dir}/lazy.ts`, JSON.stringify(env)], { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" } });
    if (out.exitCode !== 0) throw new Error(out.stderr.toString());
    return JSON.parse(out.stdout.toString().trim().split("\n").at(-1)!) as { otel: number; prom: number };
  };

  test("without OTEL_EXPORTER_OTLP_ENDPOINT and METRICS_ENABLED neither the OpenTelemetry SDK nor prom-client is loaded", () => {
    expect(loaded({})).toEqual({ otel: 0, prom: 0 });
    const on = loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", METRICS_ENABLED: "true" });
    expect(on.otel).toBeGreaterThan(0);
    expect(on.prom).toBeGreaterThan(0);
  });
});
