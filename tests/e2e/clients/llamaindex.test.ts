// LlamaIndex TS against the compiled binary: a FunctionAgent on the Responses API
// (`@llamaindex/openai`'s OpenAIResponses) with `trackPreviousResponses`, which sends the
// pending function_call and its output again with `previous_response_id`, with its default
// `store: false` and with `store: true`.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { OpenAIResponses } from "@llamaindex/openai";
import { agent } from "@llamaindex/workflow";
import { tool } from "llamaindex";
import { z } from "zod";
import { startBinary, type RunningBinary } from "./binary";

let s: RunningBinary;
beforeAll(async () => {
  s = await startBinary();
});
afterAll(() => s.stop());
beforeEach(() => s.llm.reset());

const weather = tool({
  name: "get_weather",
  description: "Weather for a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => (city === "Paris" ? "sunny, 24 °C" : "unknown"),
});

const responsesLlm = (store?: boolean) =>
  new OpenAIResponses({ model: "gpt-4o-mini", apiKey: s.token, baseURL: `${s.url}/api/v1`, maxRetries: 0, trackPreviousResponses: true, ...(store === undefined ? {} : { store }) });

describe("LlamaIndex FunctionAgent with trackPreviousResponses", () => {
  for (const store of [undefined, true]) {
    test(`a tool call and its answer (store: ${store ?? "false, the default"})`, async () => {
      s.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, { text: "It is sunny in Paris, 24 °C." });
      const weatherAgent = agent({ llm: responsesLlm(store), tools: [weather], systemPrompt: "You answer weather questions." });
      const result = await weatherAgent.run("What is the weather in Paris?");
      expect(String(result.data.result)).toContain("It is sunny in Paris, 24 °C.");
      // the model got the tool's output once, after its call
      const sent = s.llm.lastChat().messages;
      expect(sent.filter((m: any) => m.role === "tool").map((m: any) => m.content)).toEqual(["sunny, 24 °C"]);
      expect(sent.filter((m: any) => m.role === "user")).toHaveLength(1);
    });
  }
});
