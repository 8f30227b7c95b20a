/**
 * Whether a provider refused a request because its prompt is longer than the model's
 * context. The wordings of OpenAI (`context_length_exceeded`), vLLM, llama.cpp
 * (`exceed_context_size_error`), Ollama, OpenRouter and others; the error's `code`, its
 * provider body and its message are all looked at, and so is its `cause`.
 */
const PATTERNS = [
  /context[_ ]length[_ ]exceeded/i,
  /maximum context length/i, // OpenAI, vLLM, OpenRouter: "This model's maximum context length is 4096 tokens"
  /exceeds? (the )?(available |maximum )?context (size|length|window)/i, // llama.cpp, Ollama
  /exceed_context_size/i, // llama.cpp's error type
  /context (window|size) (is )?(exceeded|too small)/i,
  /(prompt|input)( is| was)? too long/i, // Ollama "prompt too long"
  /prompt \([^)]*\) is too long/i, // vLLM "Input prompt (5000 tokens) is too long", "The prompt (total length 5000) is too long"
  /too long to fit into the model/i, // vLLM
  /longer than the (model'?s? )?maximum (model |context )?length/i, // vLLM
  /too many (input )?tokens/i,
  /reduce the length of the (messages|prompt|input)/i,
  /requested \d+ tokens.*(context|maximum)/i,
];

export function isContextOverflow(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e === "string") return PATTERNS.some((p) => p.test(e as string));
    if (typeof e !== "object") return false;
    const o = e as { code?: unknown; type?: unknown; message?: unknown; error?: unknown };
    const texts = [o.code, o.type, o.message, ...(o.error && typeof o.error === "object" ? Object.values(o.error) : [o.error])];
    if (texts.some((t) => typeof t === "string" && PATTERNS.some((p) => p.test(t)))) return true;
  }
  return false;
}

/** The prompt size the provider says it counted, when its message gives it. */
export function reportedPromptTokens(error: unknown): number | undefined {
  const text = String((error as { message?: unknown })?.message ?? error ?? "");
  const m =
    /resulted in (\d+) tokens/i.exec(text) ?? // OpenAI
    /requested (\d+) tokens/i.exec(text) ?? // vLLM (prompt + max_tokens)
    /\((\d+) tokens\)/i.exec(text) ?? // vLLM "Input prompt (5000 tokens)"
    /total length (\d+)/i.exec(text) ?? // vLLM "The prompt (total length 5000)"
    /request \((\d+) tokens\) exceeds/i.exec(text); // llama.cpp
  return m ? Number(m[1]) : undefined;
}
