import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { isContextOverflow, reportedPromptTokens } from "../../src/context/overflow";
import { TurnError } from "../../src/errors";

const apiError = (status: number, error: object) => OpenAI.APIError.generate(status, { error }, undefined, new Headers());

describe("context overflow errors", () => {
  test.each([
    ["OpenAI", "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages."],
    ["vLLM (old)", "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion)."],
    ["vLLM (input prompt)", "Input prompt (5000 tokens) is too long and exceeds limit of 4096"],
    ["vLLM (total length)", "The prompt (total length 25938) is too long to fit into the model (context length 4096)."],
    ["vLLM (max model length)", "The decoder prompt (length 5000) is longer than the maximum model length of 4096."],
    ["llama.cpp", "the request exceeds the available context size, try increasing the context size or enable context shift"],
    ["Ollama", "input exceeds context length"],
    ["Ollama (prompt)", "prompt too long; exceeded max context length by 123 tokens"],
  ])("%s", (_, message) => {
    expect(isContextOverflow(new Error(message))).toBe(true);
  });

  test("by the error's code or type, on the SDK's error or as the cause of ours", () => {
    const openai = apiError(400, { message: "Request too long", code: "context_length_exceeded", type: "invalid_request_error" });
    expect(isContextOverflow(openai)).toBe(true);
    const llamaCpp = apiError(400, { message: "the request is bad", type: "exceed_context_size_error", n_prompt_tokens: 5000 });
    expect(isContextOverflow(llamaCpp)).toBe(true);
    const wrapped = Object.assign(new TurnError("llm_error", "The language model at x answered HTTP 400 (bad request): Request too long."), { cause: openai });
    expect(isContextOverflow(wrapped)).toBe(true);
  });

  test("other failures are not overflows", () => {
    expect(isContextOverflow(new Error("Rate limit reached for requests per min. Limit 10000, Requested 12000."))).toBe(false);
    expect(isContextOverflow(apiError(404, { message: "The model `x` does not exist", code: "model_not_found" }))).toBe(false);
    expect(isContextOverflow(new TurnError("cancelled", "The response was cancelled."))).toBe(false);
    expect(isContextOverflow(undefined)).toBe(false);
  });

  test("the prompt size the provider counted, when it says", () => {
    expect(reportedPromptTokens(new Error("However, your messages resulted in 9000 tokens."))).toBe(9000);
    expect(reportedPromptTokens(new Error("Input prompt (5000 tokens) is too long"))).toBe(5000);
    expect(reportedPromptTokens(new Error("The prompt (total length 25938) is too long"))).toBe(25938);
    expect(reportedPromptTokens(new Error("too long"))).toBeUndefined();
  });
});
