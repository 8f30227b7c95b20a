// The raw model proxy: POST /v1/chat/completions goes to the LLM as the caller sent it — no
// system prompt, no tools, no memory — and GET /v1/models.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import { startTestService, TOKEN, type TestService } from "../support/harness";

describe("proxy with a configured LLM", () => {
  let t: TestService;
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTestService();
    client = new OpenAI({ baseURL: t.url + "/v1", apiKey: TOKEN, maxRetries: 0 });
  });
  afterEach(() => t.llm.reset());
  afterAll(() => t.stop());

  test("non-stream: the recorded upstream request is exactly what the caller sent", async () => {
    const params = {
      model: "scripted-model",
      messages: [
        { role: "system" as const, content: "You are a pirate." },
        { role: "user" as const, content: "Ahoy?" },
        { role: "assistant" as const, content: "Arr." },
        { role: "user" as const, content: "Say more" },
      ],
      temperature: 0.25,
      max_tokens: 50,
      user: "caller-field",
    };
    t.llm.enqueue({ text: "Arr, matey!", usage: { prompt_tokens: 11, completion_tokens: 3 } });
    const res = await client.chat.completions.create(params);
    expect(res.object).toBe("chat.completion");
    expect(res.choices[0]!.message.content).toBe("Arr, matey!");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });

    const reqs = t.llm.chatRequests();
    expect(reqs.length).toBe(1);
    expect(reqs[0]!.body).toEqual(params);
    expect(reqs[0]!.body.tools).toBeUndefined();
    expect(reqs[0]!.body.messages.filter((m: any) => m.role === "system")).toEqual([params.messages[0]]);
    // the upstream sees the configured key, never the caller's token
    expect(reqs[0]!.headers.authorization).toBe("Bearer test-key");
    expect(JSON.stringify(reqs[0]!.headers)).not.toContain(TOKEN);
  });

  test("a lone user message gets no system prompt and no tools", async () => {
    const params = { model: "scripted-model", messages: [{ role: "user" as const, content: "just this" }] };
    const res = await client.chat.completions.create(params);
    expect(res.choices[0]!.message.content).toBe("You said: just this");
    expect(t.llm.lastChat()).toEqual(params);
  });

  test("caller-supplied tools go through untouched, and tool calls come back", async () => {
    const params = {
      model: "scripted-model",
      messages: [{ role: "user" as const, content: "weather?" }],
      tools: [
        {
          type: "function" as const,
          function: { name: "get_weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } } } },
        },
      ],
    };
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" }, id: "call_1" }] });
    const res = await client.chat.completions.create(params);
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(res.choices[0]!.message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
    ]);
    expect(t.llm.lastChat()).toEqual(params);
  });

  test("stream: SSE chunks pass through and the request is as sent", async () => {
    const params = {
      model: "scripted-model",
      messages: [{ role: "user" as const, content: "count" }],
      stream: true as const,
      stream_options: { include_usage: true },
    };
    t.llm.enqueue({ text: "one two three", usage: { prompt_tokens: 2, completion_tokens: 3 } });
    const stream = await client.chat.completions.create(params);
    let text = "";
    let chunks = 0;
    let usage: unknown;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta?.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("one two three");
    expect(chunks).toBeGreaterThan(3);
    expect(finish).toBe("stop");
    expect(usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    expect(t.llm.lastChat()).toEqual(params);
  });

  test("stream over raw HTTP is text/event-stream ending in [DONE]", async () => {
    const res = await t.api("/v1/chat/completions", {
      method: "POST",
      json: { model: "scripted-model", stream: true, messages: [{ role: "user", content: "hey" }] },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const body = await res.text();
    expect(body).toContain("data: ");
    expect(body.trimEnd()).toEndWith("data: [DONE]");
  });

  test("model `default` or no model is replaced by the configured model", async () => {
    for (const json of [
      { model: "default", messages: [{ role: "user", content: "a" }] },
      { messages: [{ role: "user", content: "b" }] },
    ]) {
      const res = await t.api("/v1/chat/completions", { method: "POST", json });
      expect(res.status).toBe(200);
      expect(t.llm.lastChat()).toEqual({ ...json, model: "scripted-model" });
    }
  });

  for (const [status, relayed, type] of [
    [400, 400, "invalid_request_error"],
    // the service's own key refused upstream: the service failed, not the caller's token
    [401, 502, "server_error"],
    [403, 502, "server_error"],
    [404, 404, "not_found_error"],
    [422, 422, "invalid_request_error"],
    [429, 429, "rate_limit_error"],
    [500, 502, "server_error"],
    [503, 502, "server_error"],
  ] as const) {
    test(`an upstream ${status} is relayed as a ${relayed} envelope with the provider's message`, async () => {
      t.llm.enqueue({ error: { status, message: `upstream says ${status}` } });
      const res = await t.api("/v1/chat/completions", {
        method: "POST",
        json: { model: "scripted-model", messages: [{ role: "user", content: "x" }] },
      });
      expect(res.status).toBe(relayed);
      expect(await res.json()).toEqual({
        error: { message: `The language model endpoint answered HTTP ${status}: upstream says ${status}`, type, code: "upstream_error" },
      });
      expect(t.llm.chatRequests().length).toBe(1);
    });
  }

  test("/api/v1/chat/completions is the same proxy", async () => {
    t.llm.enqueue({ text: "via the api prefix" });
    const api = new OpenAI({ baseURL: t.url + "/api/v1", apiKey: t.token, maxRetries: 0 });
    const done = await api.chat.completions.create({ model: "scripted-model", messages: [{ role: "user", content: "x" }] });
    expect(done.choices[0]!.message.content).toBe("via the api prefix");
    const bad = await t.api("/api/v1/chat/completions", { method: "POST", json: { messages: ["hi"] } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.message).toBe("`messages[0]` is malformed: expected object.");
  });

  test("an upstream error reaches an SDK client as an APIError with the same status", async () => {
    t.llm.enqueue({ error: { status: 422, message: "no such thing" } });
    const err = await client.chat.completions
      .create({ model: "scripted-model", messages: [{ role: "user", content: "x" }] })
      .then(
        () => undefined,
        (e) => e,
      );
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(422);
    expect(err.message).toContain("no such thing");
  });

  test("messages that are not an array, or a body that is not JSON → 400 envelope, no upstream call", async () => {
    for (const body of [
      JSON.stringify({ model: "m" }),
      JSON.stringify({ messages: "hi" }),
      JSON.stringify({ messages: [] }),
      JSON.stringify({ messages: ["hi"] }),
      JSON.stringify({ messages: [null] }),
      "{oops",
      "[]",
      "",
    ]) {
      const res = await t.api("/v1/chat/completions", { method: "POST", body, headers: { "content-type": "application/json" } });
      expect(res.status).toBe(400);
      const json = (await res.json()) as any;
      expect(json.error.type).toBe("invalid_request_error");
    }
    expect(t.llm.chatRequests().length).toBe(0);
  });

  test("GET /v1/models lists the service's model", async () => {
    const page = await client.models.list();
    expect(page.data.length).toBeGreaterThanOrEqual(1);
    expect(page.data[0]).toMatchObject({ id: "default", object: "model" });
    expect(typeof page.data[0]!.created).toBe("number");
    const raw = (await (await t.api("/v1/models")).json()) as any;
    expect(raw.object).toBe("list");
  });

  test("wrong token → 401 for the SDK too", async () => {
    const bad = new OpenAI({ baseURL: t.url + "/v1", apiKey: "wrong", maxRetries: 0 });
    const err = await bad.models.list().then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(401);
    expect(t.llm.chatRequests().length).toBe(0);
  });
});

describe("proxy without a usable LLM", () => {
  let unconfigured: TestService;
  let unreachable: TestService;
  let closedPort: number;
  beforeAll(async () => {
    unconfigured = await startTestService({ env: { LLM_BASE_URL: "", LLM_API_KEY: "", LLM_MODEL: "" } });
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    closedPort = s.port!;
    await s.stop(true);
    unreachable = await startTestService({ env: { LLM_BASE_URL: `http://127.0.0.1:${closedPort}/v1` } });
  });
  afterAll(async () => {
    await unconfigured.stop();
    await unreachable.stop();
  });

  test("not configured → 503 server_error envelope naming the variables", async () => {
    const res = await unconfigured.api("/v1/chat/completions", {
      method: "POST",
      json: { model: "x", messages: [{ role: "user", content: "hi" }] },
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("server_error");
    expect(body.error.code).toBe("llm_not_configured");
    expect(body.error.message).toContain("LLM_BASE_URL");
    expect(unconfigured.llm.chatRequests().length).toBe(0);
  });

  test("an upstream that answers an HTML error page → a JSON envelope with a short message, not the page", async () => {
    const html = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response("<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1>" + "x".repeat(5000) + "</body></html>", { status: 502, headers: { "content-type": "text/html" } }),
    });
    const behind = await startTestService({ env: { LLM_BASE_URL: `http://127.0.0.1:${html.port}/v1` } });
    try {
      const res = await behind.api("/api/v1/chat/completions", { method: "POST", json: { messages: [{ role: "user", content: "hi" }] } });
      expect(res.status).toBe(502);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(await res.json()).toEqual({ error: { message: "The language model endpoint answered HTTP 502.", type: "server_error", code: "upstream_error" } });
    } finally {
      await behind.stop();
      await html.stop(true);
    }
  });

  test("an unreachable upstream → 502 server_error envelope", async () => {
    const res = await unreachable.api("/v1/chat/completions", {
      method: "POST",
      json: { model: "x", messages: [{ role: "user", content: "hi" }] },
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("server_error");
    expect(body.error.code).toBe("llm_error");
  });
});
