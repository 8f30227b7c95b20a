// Real Responses clients, used unchanged against the service: the official `openai` SDK and
// the Vercel AI SDK's Responses provider.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import { startTestService, type TestService } from "../../support/harness";

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"],
  additionalProperties: false,
} as const;

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());
beforeEach(() => t.llm.reset());

describe("official openai SDK", () => {
  let client: OpenAI;
  beforeAll(() => {
    client = new OpenAI({ baseURL: t.url + "/api/v1", apiKey: t.token, maxRetries: 0 });
  });

  test("responses.create (non-stream): output_text helper and fields", async () => {
    t.llm.enqueue({ text: "Hello from the agent.", usage: { prompt_tokens: 9, completion_tokens: 4 } });
    const response = await client.responses.create({ model: "gpt-test", input: "Say hello" });
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.model).toBe("gpt-test");
    expect(response.output_text).toBe("Hello from the agent.");
    expect(response.usage).toMatchObject({ input_tokens: 9, output_tokens: 4, total_tokens: 13 });
    expect(response.error).toBeNull();
    expect(t.llm.lastChat().messages.at(-1)).toEqual({ role: "user", content: "Say hello" });
  });

  test("responses.create with message-array input and instructions", async () => {
    t.llm.enqueue({ text: "Bonjour." });
    const response = await client.responses.create({
      model: "gpt-test",
      instructions: "Answer in French.",
      input: [{ role: "user", content: [{ type: "input_text", text: "Say hello" }] }],
    });
    expect(response.output_text).toBe("Bonjour.");
    const user = t.llm.lastChat().messages.at(-1);
    expect(user.role).toBe("user");
    expect(user.content).toContain("<instructions>\nAnswer in French.\n</instructions>");
    expect(user.content).toEndWith("Say hello");
  });

  test("responses.create({ stream: true }) iterates every event to response.completed", async () => {
    t.llm.enqueue({ text: "one two three" });
    const stream = await client.responses.create({ model: "gpt-test", input: "count", stream: true });
    const seen: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(text).toBe("one two three");
    expect(seen[0]).toBe("response.created");
    expect(seen.at(-1)).toBe("response.completed");
    expect(completed?.output_text ?? completed?.output.flatMap((o: any) => o.content.map((c: any) => c.text)).join("")).toBe("one two three");
  });

  test("responses.stream(): .on('response.output_text.delta') and finalResponse()", async () => {
    t.llm.enqueue({ text: "streamed via helper" });
    const deltas: string[] = [];
    const runner = client.responses.stream({ model: "gpt-test", input: "go" });
    runner.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await runner.finalResponse();
    expect(deltas.join("")).toBe("streamed via helper");
    expect(deltas.length).toBe(3);
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("streamed via helper");
  });

  test("responses.retrieve(id) returns the stored response", async () => {
    t.llm.enqueue({ text: "remember me" });
    const created = await client.responses.create({ model: "gpt-test", input: "hi" });
    const got = await client.responses.retrieve(created.id);
    expect(got.id).toBe(created.id);
    expect(got.status).toBe("completed");
    expect(got.output_text).toBe("remember me");
    expect(got.model).toBe("reborn");
    const missing = await client.responses.retrieve("resp_" + "0".repeat(64)).catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.status).toBe(404);
  });

  test("a failed turn is a 200 with status failed and the error", async () => {
    t.llm.enqueue({ error: { status: 500, message: "model down" } });
    const response = await client.responses.create({ model: "gpt-test", input: "hi" });
    expect(response.status).toBe("failed");
    expect(response.error).toMatchObject({ code: "llm_error" });
    expect(response.error!.message).toContain("model down");
  });

  test("invalid tools surface as a 400 BadRequestError", async () => {
    const err = await client.responses
      .create({ model: "gpt-test", input: "hi", tools: [{ type: "web_search" } as any] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error?.type ?? err.type).toBe("invalid_request_error");
  });

  test("a function tool round trip: function_call, then function_call_output resume", async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: "function", name: "get_weather", description: "Weather for a city", parameters: weatherParameters, strict: false },
    ];
    t.llm.enqueue({ text: "Checking.", toolCalls: [{ name: "get_weather", arguments: { city: "Berlin" } }] });
    const first = await client.responses.create({ model: "gpt-test", input: "Weather in Berlin?", tools });
    expect(first.status).toBe("completed");
    expect(first.output_text).toBe("Checking.");
    const call = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === "function_call");
    expect(call).toBeDefined();
    expect(call!.name).toBe("get_weather");
    expect(JSON.parse(call!.arguments)).toEqual({ city: "Berlin" });

    t.llm.enqueue({ text: "Berlin: 12 degrees, cloudy." });
    const second = await client.responses.create({
      model: "gpt-test",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: JSON.stringify({ temp: 12, sky: "cloudy" }) }],
      tools,
    });
    expect(second.status).toBe("completed");
    expect(second.output_text).toBe("Berlin: 12 degrees, cloudy.");
    expect(t.llm.lastChat().messages.at(-1)).toEqual({ role: "tool", tool_call_id: call!.call_id, content: '{"temp":12,"sky":"cloudy"}' });
  });

  test("a streamed function tool round trip with responses.stream()", async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: "function", name: "get_weather", description: "Weather for a city", parameters: weatherParameters, strict: false },
    ];
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Madrid" } }] });
    const argDeltas: string[] = [];
    const runner = client.responses.stream({ model: "gpt-test", input: "Madrid?", tools });
    runner.on("response.function_call_arguments.delta", (e) => argDeltas.push(e.delta));
    const first = await runner.finalResponse();
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe("get_weather");
    expect(argDeltas.join("")).toBe(call.arguments);

    t.llm.enqueue({ text: "Hot." });
    const second = await client.responses
      .stream({ model: "gpt-test", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "35C" }] })
      .finalResponse();
    expect(second.output_text).toBe("Hot.");
  });
});

describe("Vercel AI SDK Responses provider", () => {
  const model = () => createOpenAI({ baseURL: t.url + "/api/v1", apiKey: t.token }).responses("any-model");

  test("generateText", async () => {
    t.llm.enqueue({ text: "Generated by the agent.", usage: { prompt_tokens: 5, completion_tokens: 4 } });
    const result = await generateText({ model: model(), prompt: "Write something", maxRetries: 0 });
    expect(result.text).toBe("Generated by the agent.");
    expect(result.finishReason).toBe("stop");
    expect(result.usage.inputTokens).toBe(5);
    expect(result.usage.outputTokens).toBe(4);
    expect(t.llm.lastChat().messages.at(-1)).toEqual({ role: "user", content: "Write something" });
  });

  test("streamText", async () => {
    t.llm.enqueue({ text: "streamed words arrive" });
    const errors: unknown[] = [];
    const result = streamText({ model: model(), prompt: "Stream something", maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    const chunks: string[] = [];
    for await (const chunk of result.textStream) chunks.push(chunk);
    expect(errors).toEqual([]);
    expect(chunks.join("")).toBe("streamed words arrive");
    expect(await result.text).toBe("streamed words arrive");
    expect(await result.finishReason).toBe("stop");
  });

  test("a tool without execute: generateText parses the function_call", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Vienna" } }] });
    const result = await generateText({
      model: model(),
      prompt: "Weather in Vienna?",
      maxRetries: 0,
      tools: { get_weather: tool({ description: "Weather for a city", inputSchema: jsonSchema<{ city: string }>(weatherParameters) }) },
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: "get_weather", input: { city: "Vienna" } });
    expect(result.toolCalls[0]!.toolCallId).toMatch(/^call_[0-9a-f]+$/);
    expect(result.finishReason).toBe("tool-calls");
    // The provider sent the tool to the service, which offered it to the model.
    expect(
      t.llm.lastChat().tools.map((x: any) => x.function.name).filter((name: string) => !t.service.services.tools.get(name)),
    ).toEqual(["get_weather"]);
  });

  test("a tool without execute: streamText parses the streamed function_call", async () => {
    t.llm.enqueue({ text: "One moment.", toolCalls: [{ name: "get_weather", arguments: { city: "Prague" } }] });
    const errors: unknown[] = [];
    const result = streamText({
      model: model(),
      prompt: "Weather in Prague?",
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
      tools: { get_weather: tool({ description: "Weather for a city", inputSchema: jsonSchema<{ city: string }>(weatherParameters) }) },
    });
    const text: string[] = [];
    for await (const chunk of result.textStream) text.push(chunk);
    expect(errors).toEqual([]);
    expect(text.join("")).toBe("One moment.");
    const calls = await result.toolCalls;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolName: "get_weather", input: { city: "Prague" } });
    expect(await result.finishReason).toBe("tool-calls");
  });
});
