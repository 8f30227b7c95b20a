// The OpenAI Agents SDK (`@openai/agents`) against the compiled binary: its runner's tool
// loop, stateless by default, or on the server with previousResponseId or conversationId.
// It has no background mode (docs/clients.md).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Agent, ModelBehaviorError, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { startBinary, type RunningBinary } from "./binary";

let s: RunningBinary;
let client: OpenAI;
beforeAll(async () => {
  s = await startBinary();
  client = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: s.token, maxRetries: 0 });
  setDefaultOpenAIClient(client);
  setTracingDisabled(true);
});
afterAll(() => s.stop());
beforeEach(() => s.llm.reset());

const weatherOf: Record<string, string> = { Paris: "sunny, 24 °C", Rome: "rainy, 18 °C" };
const getWeather = tool({
  name: "get_weather",
  description: "Weather for a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => weatherOf[city] ?? "unknown",
});
const agent = new Agent({ name: "Assistant", instructions: "Be brief.", model: "gpt-4o-mini", tools: [getWeather] });
const twoCities = () =>
  s.llm.enqueue(
    { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
    { text: "Paris is sunny, Rome is rainy." },
  );
const toolMessages = () => s.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);

describe("OpenAI Agents SDK", () => {
  test("a plain run, then one chained with previousResponseId", async () => {
    s.llm.enqueue({ text: "Hello from the agent." });
    const first = await run(agent, "Hello");
    expect(first.finalOutput).toBe("Hello from the agent.");
    s.llm.enqueue({ text: "You said Hello." });
    const second = await run(agent, "What did I say?", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("You said Hello.");
    expect(s.llm.lastChat().messages.filter((m: any) => m.role !== "system").map((m: any) => m.content.replace(/^<instructions>[\s\S]*?<\/instructions>\s*/, ""))).toEqual([
      "Hello",
      "Hello from the agent.",
      "What did I say?",
    ]);
  });

  test("a streamed run", async () => {
    s.llm.enqueue({ text: "streamed by the runner" });
    const result = await run(agent, "Stream", { stream: true });
    let text = "";
    for await (const chunk of result.toTextStream()) text += chunk;
    await result.completed;
    expect(text).toBe("streamed by the runner");
    expect(result.finalOutput).toBe("streamed by the runner");
  });

  test("tools over several steps, in its default mode (the history replayed each request)", async () => {
    twoCities();
    const result = await run(agent, "Weather in Paris and Rome?");
    expect(result.finalOutput).toBe("Paris is sunny, Rome is rainy.");
    expect(toolMessages()).toEqual(["sunny, 24 °C", "rainy, 18 °C"]);
  });

  test("tools over several steps, chained on the server with previousResponseId", async () => {
    s.llm.enqueue({ text: "Ask away." });
    const first = await run(agent, "I have a question.");
    twoCities();
    const result = await run(agent, "Weather in Paris and Rome?", { previousResponseId: first.lastResponseId });
    expect(result.finalOutput).toBe("Paris is sunny, Rome is rainy.");
    expect(toolMessages()).toEqual(["sunny, 24 °C", "rainy, 18 °C"]);
  });

  test("tools over several steps in a conversation (conversationId)", async () => {
    const conv = await client.conversations.create({});
    twoCities();
    const result = await run(agent, "Weather in Paris and Rome?", { conversationId: conv.id });
    expect(result.finalOutput).toBe("Paris is sunny, Rome is rainy.");
    const items = await client.conversations.items.list(conv.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "function_call", "function_call_output", "message"]);
  });

  test("store: false through modelSettings, and a structured outputType", async () => {
    s.llm.enqueue({ text: "not kept" });
    const ephemeral = await run(new Agent({ name: "E", model: "m", modelSettings: { store: false } }), "x");
    expect(ephemeral.finalOutput).toBe("not kept");
    expect(await client.responses.retrieve(ephemeral.lastResponseId!).catch((e) => e.status)).toBe(404);

    s.llm.enqueue({ text: '{"city":"Paris","temperature_c":24}' });
    const typed = await run(new Agent({ name: "T", model: "m", outputType: z.object({ city: z.string(), temperature_c: z.number() }) }), "JSON");
    expect(typed.finalOutput).toEqual({ city: "Paris", temperature_c: 24 });
    expect(s.llm.lastChat().response_format.type).toBe("json_schema");
  });

  test("a failed turn fails the run; the SDK itself drops the message (docs/clients.md), as it does against OpenAI", async () => {
    s.llm.enqueue({ error: { status: 400, message: "the prompt is too long" } });
    const error = await run(agent, "x").catch((e) => e);
    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect(error.message).toBe('OpenAI Responses request ended with unsuccessful terminal state "response.failed".');
  });
});
