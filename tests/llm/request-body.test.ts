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

test("every kind of message, the system prompt's made once: the same text JSON.stringify makes of the whole request", () => {
  const messages = [
    { role: "system" as const, content: 'Be "brief".\n\nIdentity:\n' + "x".repeat(5000) },
    { role: "user" as const, content: [{ type: "text" as const, text: "see" }, { type: "image_url" as const, image_url: { url: "data:image/png;base64,AAAA" } }] },
    { role: "assistant" as const, content: null, tool_calls: [{ id: "c1", type: "function" as const, function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
    { role: "tool" as const, tool_call_id: "c1", content: "rain ✓" },
  ];
  const options = { responseFormat: { type: "json_object" } };
  const whole = (msgs: typeof messages) => JSON.stringify({ model: "m", messages: msgs, stream: true, stream_options: { include_usage: true }, max_tokens: 5, response_format: options.responseFormat });
  expect(chatRequestBody("m", { messages, tools: [], maxTokens: 5, options })).toBe(whole(messages));
  expect(chatRequestBody("m", { messages, tools: [], maxTokens: 5, options })).toBe(whole(messages));
  // a prompt that changed (an identity file written) is the new one
  const changed = [{ role: "system" as const, content: "Now shorter." }, ...messages.slice(1)];
  expect(chatRequestBody("m", { messages: changed, tools: [], maxTokens: 5, options })).toBe(whole(changed));
});
