// What each LLM server says of the context window it gives a model, read from its own API.
// Each reader names the public document its request and fields come from.
import type { Endpoint } from "./openai";

/** A window the server reported, and where it came from for people ("Ollama num_ctx of qwen3:8b"). */
export interface ServerWindow {
  tokens: number;
  from: string;
}

/** Ollama's documented default num_ctx on machines under 24 GiB of VRAM, the smallest it gives (docs/context-length.mdx). */
export const OLLAMA_DEFAULT_NUM_CTX = 4096;

/** One JSON request to the server; undefined for anything but a 2xx JSON answer. */
type Get = (url: string, body?: unknown) => Promise<unknown>;

/**
 * The window the server at `endpoint` gives its model, or undefined when no server API says.
 * The readers run side by side; the first in this order that answers wins: llama.cpp, Ollama
 * (llama.cpp answers Ollama's /api/show too, without Ollama's num_ctx), LM Studio, then the
 * OpenAI-style model list (vLLM, OpenRouter). Requests go to the base URL's own origin only
 * (they carry its key) and follow no redirect.
 */
export async function readServerWindow(endpoint: Endpoint & { baseUrl: string; model: string }, signal: AbortSignal, timeoutMs: number): Promise<ServerWindow | undefined> {
  const get = requester(endpoint, signal, timeoutMs);
  const { model } = endpoint;
  const base = endpoint.baseUrl.replace(/\/+$/, "");
  const root = serverRoot(base);
  const host = new URL(base).hostname;
  if (host === "api.openai.com") return undefined; // its model list says nothing of windows
  if (host === "openrouter.ai") return modelList(get, base, model, "OpenRouter");
  const readers = [llamaCpp(get, root, model), ollama(get, root, model), lmStudio(get, root, model), modelList(get, base, model)];
  for (const reader of readers) {
    const found = await reader;
    if (found) return found;
  }
  return undefined;
}

/** The server's root: the base URL without the OpenAI `/v1`, where llama.cpp, Ollama and LM Studio serve their own API. */
export function serverRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.search = "";
  url.hash = "";
  url.pathname = url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return url.toString().replace(/\/+$/, "");
}

function requester(endpoint: Endpoint & { baseUrl: string }, signal: AbortSignal, timeoutMs: number): Get {
  const origin = new URL(endpoint.baseUrl).origin;
  return async (url, body) => {
    if (new URL(url).origin !== origin) return undefined;
    try {
      const res = await fetch(url, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
      if (!res.ok) {
        await res.body?.cancel();
        return undefined;
      }
      return await res.json();
    } catch {
      return undefined;
    }
  };
}

/**
 * llama.cpp's llama-server: `GET /props` → `default_generation_settings.n_ctx`, the context of
 * one slot (ggml-org/llama.cpp tools/server/README.md, "GET /props"). In router mode a bare
 * /props answers a placeholder `n_ctx` of 0 and `/props?model=` the model's own
 * (SillyTavern/SillyTavern#4914), so that is asked next.
 */
async function llamaCpp(get: Get, root: string, model: string): Promise<ServerWindow | undefined> {
  const nCtx = (props: unknown) => positive(field(field(props, "default_generation_settings"), "n_ctx"));
  const props = await get(`${root}/props`);
  if (!isObject(props)) return undefined;
  const tokens = nCtx(props) ?? nCtx(await get(`${root}/props?model=${encodeURIComponent(model)}`));
  return tokens ? { tokens, from: `llama.cpp n_ctx of ${model}` } : undefined;
}

/**
 * Ollama: `POST /api/show {model}` → `model_info["<arch>.context_length"]`, what the model was
 * trained for, and `parameters` ("num_ctx 8192" lines from its Modelfile) (ollama/ollama
 * docs/api.md, "Show Model Information"); `GET /api/ps` → a loaded model's `context_length`,
 * the context Ollama really gave it (docs.ollama.com/api/ps). Ollama's OpenAI endpoint
 * silently cuts a prompt longer than its num_ctx, so the window is the smallest of these;
 * with no num_ctx anywhere, Ollama's documented default.
 */
async function ollama(get: Get, root: string, model: string): Promise<ServerWindow | undefined> {
  const [show, ps] = await Promise.all([get(`${root}/api/show`, { model }), get(`${root}/api/ps`)]);
  const info = field(show, "model_info");
  const arch = field(info, "general.architecture");
  if (typeof arch !== "string") return undefined; // not Ollama (llama.cpp's look-alike has no architecture)
  const parameters = field(show, "parameters");
  const numCtx = positive(Number(/^num_ctx\s+(\d+)\s*$/m.exec(typeof parameters === "string" ? parameters : "")?.[1]));
  const running = field(ps, "models");
  const loaded = Array.isArray(running) ? running.find((m) => sameOllamaModel(field(m, "name") ?? field(m, "model"), model)) : undefined;
  const loadedCtx = positive(field(loaded, "context_length"));
  const candidates: ServerWindow[] = [];
  const trained = positive(field(info, `${arch}.context_length`));
  if (trained) candidates.push({ tokens: trained, from: `Ollama context_length of ${model}` });
  if (numCtx) candidates.push({ tokens: numCtx, from: `Ollama num_ctx of ${model}` });
  if (loadedCtx) candidates.push({ tokens: loadedCtx, from: `Ollama num_ctx of ${model}, as loaded` });
  if (!numCtx && !loadedCtx) candidates.push({ tokens: OLLAMA_DEFAULT_NUM_CTX, from: `Ollama's default num_ctx, ${model} sets none` });
  return candidates.reduce((a, b) => (b.tokens < a.tokens ? b : a));
}

/** `qwen3` is `qwen3:latest` to Ollama. */
const sameOllamaModel = (name: unknown, model: string) =>
  typeof name === "string" && (name === model || name === `${model}:latest` || `${name}:latest` === model);

/**
 * LM Studio: `GET /api/v0/models/{model}` → `max_context_length` (lmstudio-ai/docs
 * 1_developer/2_rest/endpoints.mdx) and, once loaded, `loaded_context_length`, the context it
 * was loaded with (zed-industries/zed#25606, co-l/openfox#49), which is what counts.
 */
async function lmStudio(get: Get, root: string, model: string): Promise<ServerWindow | undefined> {
  const info = await get(`${root}/api/v0/models/${model.split("/").map(encodeURIComponent).join("/")}`);
  const loaded = positive(field(info, "loaded_context_length"));
  if (loaded) return { tokens: loaded, from: `LM Studio loaded_context_length of ${model}` };
  const max = positive(field(info, "max_context_length"));
  return max ? { tokens: max, from: `LM Studio max_context_length of ${model}` } : undefined;
}

/**
 * The OpenAI-style model list, `GET {base}/models`, with a field beyond OpenAI's: vLLM's
 * `max_model_len` (vllm-project/vllm#4643) or OpenRouter's `context_length`
 * (openrouter.ai/docs/models, "Model Object Schema").
 */
async function modelList(get: Get, base: string, model: string, server?: string): Promise<ServerWindow | undefined> {
  const data = field(await get(`${base}/models`), "data");
  const entry = Array.isArray(data) ? data.find((m) => field(m, "id") === model) : undefined;
  const maxModelLen = positive(field(entry, "max_model_len"));
  if (maxModelLen) return { tokens: maxModelLen, from: `vLLM max_model_len of ${model}` };
  const contextLength = positive(field(entry, "context_length"));
  return contextLength ? { tokens: contextLength, from: `${server ?? "GET /models"} context_length of ${model}` } : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const field = (v: unknown, key: string): unknown => (isObject(v) ? v[key] : undefined);
const positive = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined);
