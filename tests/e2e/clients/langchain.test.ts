// LangChain (`@langchain/openai`, ChatOpenAI with useResponsesApi) against the compiled
// binary. It has no conversation option of its own (modelKwargs carries one) and no
// background mode (docs/clients.md).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { type AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import { startBinary, weatherSchema, type RunningBinary } from "./binary";

let s: RunningBinary;
const chat = (fields: Partial<ConstructorParameters<typeof ChatOpenAI>[0] & object> = {}) =>
  new ChatOpenAI({ model: "gpt-4o-mini", apiKey: s.token, configuration: { baseURL: `${s.url}/api/v1` }, useResponsesApi: true, maxRetries: 0, ...fields });
beforeAll(async () => {
  s = await startBinary();
});
afterAll(() => s.stop());
beforeEach(() => s.llm.reset());

const weatherOf: Record<string, string> = { Paris: "sunny, 24 °C", Rome: "rainy, 18 °C" };
const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "Weather for a city", parameters: weatherSchema } };
const toolMessages = () => s.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
const text = (m: AIMessage) => (typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text ?? "").join(""));

describe("LangChain ChatOpenAI (useResponsesApi)", () => {
  test("invoke, then a turn chained with previous_response_id", async () => {
    s.llm.enqueue({ text: "Hello from the agent." });
    const first = await chat().invoke("Hello");
    expect(text(first)).toBe("Hello from the agent.");
    const id = first.response_metadata.id as string;
    expect(id).toMatch(/^resp_[0-9a-f]{64}$/);
    s.llm.enqueue({ text: "You said Hello." });
    const second = await chat().invoke("What did I say?", { previous_response_id: id });
    expect(text(second)).toBe("You said Hello.");
    expect(s.llm.lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(["Hello", "Hello from the agent.", "What did I say?"]);
  });

  test("stream", async () => {
    s.llm.enqueue({ text: "streamed words arrive" });
    let out = "";
    for await (const chunk of await chat().stream("Stream")) out += text(chunk as AIMessage);
    expect(out).toBe("streamed words arrive");
  });

  test("tools over several steps, the message history replayed each time (its default)", async () => {
    s.llm.enqueue(
      { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
      { text: "Paris is sunny, Rome is rainy." },
    );
    const model = chat().bindTools([weatherTool]);
    const messages: BaseMessage[] = [new HumanMessage("Weather in Paris and Rome?")];
    for (let step = 0; step < 5; step++) {
      const reply = await model.invoke(messages);
      messages.push(reply);
      if (!reply.tool_calls?.length) break;
      for (const c of reply.tool_calls) messages.push(new ToolMessage({ tool_call_id: c.id!, content: weatherOf[c.args.city] ?? "unknown" }));
    }
    expect(text(messages.at(-1) as AIMessage)).toBe("Paris is sunny, Rome is rainy.");
    expect(toolMessages()).toEqual(["sunny, 24 °C", "rainy, 18 °C"]);
  });

  test("tools chained with previous_response_id: only the tool result is sent", async () => {
    s.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] }, { text: "Rome is rainy." });
    const model = chat().bindTools([weatherTool]);
    const first = await model.invoke([new HumanMessage("Weather in Rome?")]);
    const call = first.tool_calls![0]!;
    const second = await model.invoke([new ToolMessage({ tool_call_id: call.id!, content: "rainy, 18 °C" })], {
      previous_response_id: first.response_metadata.id as string,
    });
    expect(text(second)).toBe("Rome is rainy.");
    expect(toolMessages()).toEqual(["rainy, 18 °C"]);
  });

  test("store: false (zdrEnabled) and withStructuredOutput", async () => {
    s.llm.enqueue({ text: "not kept" });
    const ephemeral = await chat({ zdrEnabled: true }).invoke("x");
    const res = await fetch(`${s.url}/api/v1/responses/${ephemeral.response_metadata.id}`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(res.status).toBe(404);

    s.llm.enqueue({ text: '{"city":"Paris","temperature_c":24}' });
    const structured = await chat().withStructuredOutput(z.object({ city: z.string(), temperature_c: z.number() })).invoke("JSON");
    expect(structured).toEqual({ city: "Paris", temperature_c: 24 });
    expect(s.llm.lastChat().response_format.type).toBe("json_schema");
  });

  test("a conversation, through modelKwargs (ChatOpenAI has no option of its own for it)", async () => {
    const res = await fetch(`${s.url}/api/v1/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
      body: JSON.stringify({ items: [{ role: "user", content: "My name is Ada." }] }),
    });
    const conv = (await res.json()) as { id: string };
    s.llm.enqueue({ text: "You are Ada." });
    const reply = await chat({ modelKwargs: { conversation: conv.id } }).invoke("Who am I?");
    expect(text(reply)).toBe("You are Ada.");
    expect(s.llm.lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(["My name is Ada.", "Who am I?"]);
  });

  test("a failed turn surfaces the service's message", async () => {
    s.llm.enqueue({ error: { status: 400, message: "the prompt is too long" } });
    const error = await chat().invoke("x").catch((e) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error.message)).toContain("the prompt is too long");
  });
});
