import { expect, test } from "bun:test";
import { chatRequestBody } from "../../src/llm/request-body";
import type { ToolSpec } from "../../src/llm/types";

const weather: ToolSpec = { name: "weather", description: "The weather \"now\".", parameters: { type: "object", properties: { city: { type: "string" } } } };

test("the body is the request the SDK would send: each tool as a function definition, after the options", () => {
  const body = chatRequestBody("m", {
    messages: [{ role: "user", content: "hi ✓" }],
    tools: [weather],
    maxTokens: 100,
    options: { temperature: 0.2 },
  });
  expect(JSON.parse(body)).toEqual({
    model: "m",
    messages: [{ role: "user", content: "hi ✓" }],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 100,
    temperature: 0.2,
    tools: [{ type: "function", function: { name: "weather", description: 'The weather "now".', parameters: weather.parameters } }],
  });
});

test("no tools: no tools key; the same spec twice is the same text", () => {
  expect(JSON.parse(chatRequestBody("m", { messages: [], tools: [] }))).not.toHaveProperty("tools");
  const once = chatRequestBody("m", { messages: [], tools: [weather, weather] });
  expect(JSON.parse(once).tools).toHaveLength(2);
});

test("a list offered again gives the same tools; another list its own", () => {
  const clock: ToolSpec = { name: "clock", description: "The time.", parameters: { type: "object", properties: {} } };
  const offered = [weather, clock];
  const names = (tools: readonly ToolSpec[], content: string) => {
    const body = JSON.parse(chatRequestBody("m", { messages: [{ role: "user", content }], tools }));
    expect(body.messages[0].content).toBe(content);
    return body.tools.map((t: { function: { name: string } }) => t.function.name);
  };
  expect(names(offered, "one")).toEqual(["weather", "clock"]);
  expect(names(offered, "two")).toEqual(["weather", "clock"]);
  expect(names([clock], "three")).toEqual(["clock"]);
});
