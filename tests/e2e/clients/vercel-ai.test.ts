// The Vercel AI SDK's Responses provider (`@ai-sdk/openai`, `openai.responses(...)`) against
// the compiled binary. It has no background mode and no streamed retrieval (docs/clients.md).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, jsonSchema, Output, streamText, tool } from "ai";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { z } from "zod";
import { startBinary, weatherSchema, type RunningBinary } from "./binary";

let s: RunningBinary;
let model: ReturnType<ReturnType<typeof createOpenAI>["responses"]>;
beforeAll(async () => {
  s = await startBinary();
  model = createOpenAI({ baseURL: `${s.url}/api/v1`, apiKey: s.token }).responses("gpt-4o-mini");
});
afterAll(() => s.stop());
beforeEach(() => s.llm.reset());

const weatherOf: Record<string, string> = { Paris: "sunny, 24 °C", Rome: "rainy, 18 °C" };
const getWeather = tool({
  description: "Weather for a city",
  inputSchema: jsonSchema<{ city: string }>(weatherSchema),
  execute: async ({ city }) => weatherOf[city] ?? "unknown",
});
const toolMessages = () => s.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);

describe("Vercel AI SDK", () => {
  test("generateText, then a turn chained with previousResponseId", async () => {
    s.llm.enqueue({ text: "Hi, I am the agent." });
    const first = await generateText({ model, prompt: "Hello", maxRetries: 0 });
    expect(first.text).toBe("Hi, I am the agent.");
    const responseId = first.providerMetadata?.openai?.responseId as string;
    expect(responseId).toMatch(/^resp_[0-9a-f]{64}$/);
    s.llm.enqueue({ text: "You said Hello." });
    const second = await generateText({ model, prompt: "What did I say?", maxRetries: 0, providerOptions: { openai: { previousResponseId: responseId } } });
    expect(second.text).toBe("You said Hello.");
    expect(s.llm.lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(["Hello", "Hi, I am the agent.", "What did I say?"]);
  });

  test("streamText", async () => {
    s.llm.enqueue({ text: "streamed words arrive" });
    const result = streamText({ model, prompt: "Stream", maxRetries: 0 });
    const chunks: string[] = [];
    for await (const c of result.textStream) chunks.push(c);
    expect(chunks.join("")).toBe("streamed words arrive");
    expect(await result.finishReason).toBe("stop");
  });

  test("tools over several steps, in its default mode (the history replayed each step)", async () => {
    s.llm.enqueue(
      { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
      { text: "Paris is sunny, Rome is rainy." },
    );
    const result = await generateText({ model, prompt: "Weather in Paris and Rome?", tools: { get_weather: getWeather }, stopWhen: isStepCount(5), maxRetries: 0 });
    expect(result.text).toBe("Paris is sunny, Rome is rainy.");
    expect(result.steps).toHaveLength(3);
    expect(toolMessages()).toEqual(["sunny, 24 °C", "rainy, 18 °C"]);
  });

  test("tools chained with previousResponseId: the tool result alone resumes the response", async () => {
    s.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] }, { text: "Rome is rainy." });
    // no execute: the caller runs the tool itself and answers in a later request
    const tools = { get_weather: tool({ description: "Weather for a city", inputSchema: jsonSchema<{ city: string }>(weatherSchema) }) };
    const first = await generateText({ model, prompt: "Weather in Rome?", tools, maxRetries: 0 });
    const call = first.toolCalls[0]!;
    const second = await generateText({
      model,
      tools,
      maxRetries: 0,
      messages: [{ role: "tool", content: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: { type: "text", value: "rainy, 18 °C" } }] }],
      providerOptions: { openai: { previousResponseId: first.providerMetadata?.openai?.responseId as string } },
    });
    expect(second.text).toBe("Rome is rainy.");
    expect(toolMessages()).toEqual(["rainy, 18 °C"]);
  });

  test("store: false and structured output (Output.object)", async () => {
    s.llm.enqueue({ text: "not kept" });
    const ephemeral = await generateText({ model, prompt: "x", maxRetries: 0, providerOptions: { openai: { store: false } } });
    expect(ephemeral.text).toBe("not kept");
    const id = ephemeral.providerMetadata?.openai?.responseId as string;
    expect((await fetch(`${s.url}/api/v1/responses/${id}`, { headers: { authorization: `Bearer ${s.token}` } })).status).toBe(404);

    s.llm.enqueue({ text: '{"city":"Paris","temperature_c":24}' });
    const structured = await generateText({ model, prompt: "JSON", maxRetries: 0, output: Output.object({ schema: z.object({ city: z.string(), temperature_c: z.number() }) }) });
    expect(structured.output).toEqual({ city: "Paris", temperature_c: 24 });
    expect(s.llm.lastChat().response_format.type).toBe("json_schema");
  });

  test("a failed turn surfaces the service's message", async () => {
    s.llm.enqueue({ error: { status: 400, message: "the prompt is too long" } });
    const error = await generateText({ model, prompt: "x", maxRetries: 0 }).catch((e) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error.message)).toContain("the prompt is too long");
  });

  test("a conversation made with the Conversations API continues through providerOptions.openai.conversation", async () => {
    const conv = (await (
      await fetch(`${s.url}/api/v1/conversations`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: JSON.stringify({ items: [{ role: "user", content: "My name is Ada." }] }),
      })
    ).json()) as { id: string };
    s.llm.enqueue({ text: "You are Ada." });
    const r = await generateText({ model, prompt: "Who am I?", maxRetries: 0, providerOptions: { openai: { conversation: conv.id } } });
    expect(r.text).toBe("You are Ada.");
    expect(s.llm.lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(["My name is Ada.", "Who am I?"]);
  });

  test("a PDF sent as a file part: its text reaches the model", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage().drawText("Invoice INV-4711, total 123.45 EUR", { x: 50, y: 700, font, size: 12 });
    s.llm.enqueue({ text: "The invoice totals 123.45 EUR." });
    const r = await generateText({
      model,
      maxRetries: 0,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is the total?" },
            { type: "file", data: await doc.save(), mediaType: "application/pdf", filename: "invoice.pdf" },
          ],
        },
      ],
    });
    expect(r.text).toBe("The invoice totals 123.45 EUR.");
    expect(JSON.stringify(s.llm.lastChat().messages)).toContain("Invoice INV-4711, total 123.45 EUR");
  });
});

