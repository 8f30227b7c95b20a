import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError, APIUserAbortError } from "openai";
import { startScriptedLLM, type ScriptedLLM } from "./scripted-llm";

let llm: ScriptedLLM;
let client: OpenAI;
const model = "test-model";
const user = (content: string) => [{ role: "user" as const, content }];

beforeAll(async () => {
  llm = await startScriptedLLM();
  client = new OpenAI({ baseURL: llm.url, apiKey: "x", maxRetries: 0 });
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

describe("chat completions", () => {
  test("non-stream text", async () => {
    llm.enqueue({ text: "Hello there friend", usage: { prompt_tokens: 7, completion_tokens: 3 } });
    const res = await client.chat.completions.create({ model, messages: user("hi") });
    expect(res.object).toBe("chat.completion");
    expect(res.model).toBe(model);
    expect(res.choices[0]!.message).toMatchObject({ role: "assistant", content: "Hello there friend" });
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  test("stream text with usage chunk", async () => {
    llm.enqueue({ text: "one two three four" });
    const stream = await client.chat.completions.create({
      model, messages: user("hi"), stream: true, stream_options: { include_usage: true },
    });
    let text = "";
    let deltas = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) { text += choice.delta.content; deltas++; }
      finish = choice.finish_reason ?? finish;
    }
    expect(text).toBe("one two three four");
    expect(deltas).toBe(4);
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBe(4);
    expect(usage!.total_tokens).toBe(usage!.prompt_tokens + 4);
  });

  test("stream honours chunks and chunkDelayMs; no usage chunk without include_usage", async () => {
    llm.enqueue({ text: "abcdefghij", chunks: 2, chunkDelayMs: 1 });
    const stream = await client.chat.completions.create({ model, messages: user("hi"), stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) {
      expect(chunk.usage ?? undefined).toBeUndefined();
      const c = chunk.choices[0]?.delta.content;
      if (c) pieces.push(c);
    }
    expect(pieces).toEqual(["abcde", "fghij"]);
  });

  const calls = [
    { name: "get_weather", arguments: { city: "Paris", days: 3 } },
    { name: "search", arguments: '{"q":"bun"}', id: "call_custom" },
  ];

  test("tool calls non-stream", async () => {
    llm.enqueue({ toolCalls: calls });
    const res = await client.chat.completions.create({ model, messages: user("weather?") });
    const msg = res.choices[0]!.message;
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toHaveLength(2);
    const [a, b] = msg.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(a!.type).toBe("function");
    expect(a!.function.name).toBe("get_weather");
    expect(JSON.parse(a!.function.arguments)).toEqual({ city: "Paris", days: 3 });
    expect(b!.id).toBe("call_custom");
    expect(b!.function.arguments).toBe('{"q":"bun"}');
  });

  test("tool calls stream: arguments arrive in fragments and reassemble", async () => {
    llm.enqueue({ text: "Let me check.", toolCalls: calls });
    const stream = await client.chat.completions.create({ model, messages: user("weather?"), stream: true });
    const acc: { id?: string; name?: string; args: string; fragments: number }[] = [];
    let text = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0]!;
      text += choice.delta.content ?? "";
      finish = choice.finish_reason ?? finish;
      for (const tc of choice.delta.tool_calls ?? []) {
        const slot = (acc[tc.index] ??= { args: "", fragments: 0 });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name = tc.function.name;
        if (tc.function?.arguments) { slot.args += tc.function.arguments; slot.fragments++; }
      }
    }
    expect(text).toBe("Let me check.");
    expect(finish).toBe("tool_calls");
    expect(acc.map((c) => c.name)).toEqual(["get_weather", "search"]);
    expect(acc[1]!.id).toBe("call_custom");
    expect(JSON.parse(acc[0]!.args)).toEqual({ city: "Paris", days: 3 });
    expect(JSON.parse(acc[1]!.args)).toEqual({ q: "bun" });
    for (const c of acc) expect(c.fragments).toBeGreaterThanOrEqual(2);
  });

  test("tool calls stream works with the SDK's stream helper", async () => {
    llm.enqueue({ toolCalls: [calls[0]!] });
    const runner = client.chat.completions.stream({ model, messages: user("weather?") });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris", days: 3 });
  });

  test("error step gives an APIError with that status", async () => {
    llm.enqueue({ error: { status: 429, message: "slow down" } }, { error: { status: 500 } });
    const first = await client.chat.completions.create({ model, messages: user("hi") }).catch((e) => e);
    expect(first).toBeInstanceOf(APIError);
    expect(first.status).toBe(429);
    expect(first.message).toContain("slow down");
    const second = await client.chat.completions.create({ model, messages: user("hi"), stream: true }).catch((e) => e);
    expect(second).toBeInstanceOf(APIError);
    expect(second.status).toBe(500);
  });

  test("dropAfterChunks makes the SDK stream throw after the first chunks", async () => {
    llm.enqueue({ dropAfterChunks: 2, text: "alpha beta gamma delta" });
    const stream = await client.chat.completions.create({ model, messages: user("hi"), stream: true });
    let text = "";
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().then(() => null, (e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(text).toBe("alpha beta ");
  });

  test("dropAfterChunks on a non-stream request fails the request", async () => {
    llm.enqueue({ dropAfterChunks: 0, text: "x" });
    const err = await client.chat.completions.create({ model, messages: user("hi") }).then(() => null, (e) => e);
    expect(err).toBeInstanceOf(Error);
  });

  test("hang is cut short by AbortController", async () => {
    llm.enqueue({ hang: true });
    const ac = new AbortController();
    const started = performance.now();
    const pending = client.chat.completions.create({ model, messages: user("hi") }, { signal: ac.signal }).then(() => null, (e) => e);
    await llm.waitForRequests(1);
    ac.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(2000);
    // The server is still healthy afterwards.
    const ok = await client.chat.completions.create({ model, messages: user("again") });
    expect(ok.choices[0]!.message.content).toBe("You said: again");
  });

  test("delayMs is honoured and abortable", async () => {
    llm.enqueue({ text: "late", delayMs: 60_000 });
    const ac = new AbortController();
    const pending = client.chat.completions.create({ model, messages: user("hi"), stream: true }, { signal: ac.signal }).then(() => null, (e) => e);
    await llm.waitForRequests(1);
    ac.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
  });

  test("default echo of the last user message (string or parts)", async () => {
    const a = await client.chat.completions.create({
      model, messages: [{ role: "system", content: "sys" }, { role: "user", content: "first" }, { role: "assistant", content: "x" }, { role: "user", content: "ping" }],
    });
    expect(a.choices[0]!.message.content).toBe("You said: ping");
    const b = await client.chat.completions.create({ model, messages: [{ role: "user", content: [{ type: "text", text: "from parts" }] }] });
    expect(b.choices[0]!.message.content).toBe("You said: from parts");
    expect(b.usage!.completion_tokens).toBe(4);
    expect(b.usage!.prompt_tokens).toBeGreaterThan(0);
  });
});

describe("scripting and recording", () => {
  test("records requests, headers and bodies", async () => {
    await client.models.list();
    await client.chat.completions.create({ model, messages: user("record me"), temperature: 0.5 });
    expect(llm.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/models", "POST /v1/chat/completions"]);
    expect(llm.chatRequests()).toHaveLength(1);
    const rec = llm.chatRequests()[0]!;
    expect(rec.headers.authorization).toBe("Bearer x");
    expect(rec.headers["content-type"]).toContain("application/json");
    expect(rec.body.messages).toEqual(user("record me"));
    expect(typeof rec.at).toBe("number");
    expect(llm.lastChat()).toMatchObject({ model, temperature: 0.5 });
  });

  test("enqueue is FIFO, then falls back to respondWith, then to echo", async () => {
    llm.enqueue({ text: "first" }, { text: "second" });
    llm.respondWith((body, req) => ({ text: `responder saw ${body.messages.length} msg on ${req.path}` }));
    const ask = async () => (await client.chat.completions.create({ model, messages: user("q") })).choices[0]!.message.content;
    expect(await ask()).toBe("first");
    expect(await ask()).toBe("second");
    expect(await ask()).toBe("responder saw 1 msg on /v1/chat/completions");
    llm.respondWith(null);
    expect(await ask()).toBe("You said: q");
  });

  test("async responder can script tool calls", async () => {
    llm.respondWith(async (body) => ({ toolCalls: [{ name: "echo", arguments: { n: body.messages.length } }] }));
    const res = await client.chat.completions.create({ model, messages: user("q") });
    const call = res.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ n: 1 });
  });

  test("waitForRequests resolves on arrival and rejects on timeout", async () => {
    llm.enqueue({ hang: true }, { hang: true });
    const ac = new AbortController();
    const fire = () => client.chat.completions.create({ model, messages: user("w") }, { signal: ac.signal }).catch(() => {});
    const waiting = llm.waitForRequests(2);
    const p1 = fire();
    const p2 = fire();
    await waiting;
    expect(llm.chatRequests()).toHaveLength(2);
    ac.abort();
    await Promise.all([p1, p2]);
    await expect(llm.waitForRequests(3, 20)).rejects.toThrow(/expected 3/);
  });

  test("unknown routes give 404 JSON", async () => {
    const res = await fetch(`${llm.url}/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.message).toContain("/v1/nope");
  });

  test("models list", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["scripted-model"]);
    expect(models.data[0]!.owned_by).toBe("scripted");
  });
});

describe("embeddings", () => {
  test("deterministic vectors for string and string[] (base64 and float)", async () => {
    const one = await client.embeddings.create({ model: "emb", input: "hello" });
    const many = await client.embeddings.create({ model: "emb", input: ["hello", "world"], encoding_format: "float" });
    expect(many.object).toBe("list");
    expect(many.data.map((d) => d.index)).toEqual([0, 1]);
    expect(many.data[0]!.embedding).toHaveLength(8);
    expect(Array.from(one.data[0]!.embedding)).toEqual(many.data[0]!.embedding);
    expect(many.data[0]!.embedding).not.toEqual(many.data[1]!.embedding);
    expect(Math.hypot(...many.data[1]!.embedding)).toBeCloseTo(1, 5);
    expect(many.usage.prompt_tokens).toBeGreaterThan(0);
  });
});

describe("options", () => {
  test("apiKey is enforced", async () => {
    const secured = await startScriptedLLM({ apiKey: "sekret", model: "m1" });
    try {
      const bad = new OpenAI({ baseURL: secured.url, apiKey: "wrong", maxRetries: 0 });
      const err = await bad.chat.completions.create({ model, messages: user("hi") }).catch((e) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(err.status).toBe(401);
      const good = new OpenAI({ baseURL: secured.url, apiKey: "sekret", maxRetries: 0 });
      expect((await good.chat.completions.create({ model, messages: user("hi") })).choices[0]!.message.content).toBe("You said: hi");
      expect((await good.models.list()).data[0]!.id).toBe("m1");
    } finally {
      await secured.close();
    }
  });

  test("record:false keeps nothing but still counts and answers", async () => {
    const quiet = await startScriptedLLM({ record: false });
    try {
      const c = new OpenAI({ baseURL: quiet.url, apiKey: "x", maxRetries: 0 });
      await Promise.all([1, 2, 3].map((i) => c.chat.completions.create({ model, messages: user(`n${i}`) })));
      await quiet.waitForRequests(3);
      expect(quiet.requests).toHaveLength(0);
      expect(quiet.chatRequests()).toHaveLength(0);
    } finally {
      await quiet.close();
    }
  });

  test("close() releases a hanging request", async () => {
    const tmp = await startScriptedLLM();
    tmp.enqueue({ hang: true });
    const c = new OpenAI({ baseURL: tmp.url, apiKey: "x", maxRetries: 0 });
    const pending = c.chat.completions.create({ model, messages: user("hi") }).then(() => null, (e) => e);
    await tmp.waitForRequests(1);
    await tmp.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  test("close() leaves no timers behind: a process with pending delay/hang requests exits", async () => {
    const script = `
      import { startScriptedLLM } from ${JSON.stringify(`${import.meta.dir}/scripted-llm.ts`)};
      const llm = await startScriptedLLM();
      llm.enqueue({ text: "x", delayMs: 60000 }, { hang: true }, { text: "y", chunkDelayMs: 60000 });
      const ask = (stream) => fetch(llm.url + "/chat/completions", { method: "POST", body: JSON.stringify({ stream, messages: [] }) });
      const pending = [ask(false), ask(false)].map((p) => p.catch(() => {}));
      const streamed = await ask(true);
      const reader = streamed.body.getReader();
      await reader.read();
      await llm.waitForRequests(3);
      await llm.close();
      await Promise.all(pending);
      reader.read().catch(() => {});
      console.log("closed");
    `;
    const proc = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stdout).text()).toBe("closed\n");
  });

  test("CLI prints its URL and serves until SIGTERM", async () => {
    const proc = Bun.spawn(["bun", `${import.meta.dir}/scripted-llm.ts`, "--port", "0", "--answer", "canned", "--no-record"], { stdout: "pipe" });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      const url = out.match(/^scripted-llm listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/)?.[1];
      expect(url).toBeDefined();
      const c = new OpenAI({ baseURL: url!, apiKey: "x", maxRetries: 0 });
      expect((await c.chat.completions.create({ model, messages: user("hi") })).choices[0]!.message.content).toBe("canned");
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
  });
});
