// End to end, as a user runs it: the compiled binary, started from an empty directory with no
// node_modules, onboarded non-interactively, then driven with the official openai SDK.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { BIN, ensureBinary, listeningUrl, serveUntil } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

let llm: ScriptedLLM;
let dir: string;
let home: string;

const envOf = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? "", HOME: dir, SERVICE_HOME: home, GATEWAY_PORT: "0", CLI_ENABLED: "false", ...env });

function run(args: string[], env: Record<string, string> = {}) {
  return spawn([BIN, ...args], { cwd: dir, env: envOf(env), stdout: "pipe", stderr: "pipe" });
}

/** Starts `serve` and resolves once it prints its URL (readiness, not a sleep). */
async function serve(env: Record<string, string> = {}) {
  const s = await serveUntil(["serve"], { cwd: dir, env: envOf(env) }, listeningUrl);
  return { proc: s.proc, url: s.ready, output: s.output };
}

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-e2e-"));
  home = join(dir, "home");
});

afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the compiled binary", () => {
  let token: string;
  let url: string;
  let proc: Subprocess;
  let client: OpenAI;
  let firstId: string;

  test("onboards non-interactively and writes the home with safe modes", async () => {
    const p = run(["onboard", "--non-interactive", "--llm-base-url", llm.url, "--llm-api-key", "k", "--llm-model", "scripted-model"]);
    const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
    expect(code).toBe(0);
    token = readFileSync(join(home, "webui-token"), "utf8").trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(out).toContain(`/login?token=${token}`);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, "webui-token")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "config.json")).mode & 0o777).toBe(0o600);
  });

  test("serves the Responses API to the official openai SDK", async () => {
    ({ proc, url } = await serve());
    client = new OpenAI({ baseURL: `${url}/api/v1`, apiKey: token });
    llm.enqueue({ text: "Hello from the binary." });
    const r = await client.responses.create({ model: "my-hint", input: "Say hello" });
    expect(r.status).toBe("completed");
    expect(r.model).toBe("my-hint");
    expect(r.output_text).toBe("Hello from the binary.");
    expect(r.id).toMatch(/^resp_[0-9a-f]{64}$/);
    firstId = r.id;
    const sent = llm.lastChat();
    expect(sent.model).toBe("scripted-model");
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: "Say hello" });
  });

  test("streams with responses.stream() and continues the thread", async () => {
    llm.enqueue({ text: "Streaming works fine." });
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: "my-hint", input: "And now?", previous_response_id: firstId });
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join("")).toBe("Streaming works fine.");
    expect(final.output_text).toBe("Streaming works fine.");
    expect(final.id.slice(37)).toBe(firstId.slice(37)); // same thread
    expect(llm.lastChat().messages.map((m: any) => m.content)).toContain("Hello from the binary.");
  });

  test("runs a caller tool round trip", async () => {
    const tools = [
      { type: "function" as const, name: "get_weather", description: "Weather for a city", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
    ];
    llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] }, { text: "It is sunny in Oslo." });
    const first = await client.responses.create({ model: "m", input: "Weather in Oslo?", tools });
    const call = first.output.find((o) => o.type === "function_call");
    expect(call?.type === "function_call" && call.name).toBe("get_weather");
    if (call?.type !== "function_call") throw new Error("no call");
    expect(JSON.parse(call.arguments)).toEqual({ city: "Oslo" });
    const second = await client.responses.create({
      model: "m",
      previous_response_id: first.id,
      tools,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny, 21 C" }],
    });
    expect(second.output_text).toBe("It is sunny in Oslo.");
    expect(llm.lastChat().messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: "sunny, 21 C" });
  });

  test("stops cleanly on SIGTERM and keeps every acknowledged response", async () => {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const again = await serve();
    const c = new OpenAI({ baseURL: `${again.url}/api/v1`, apiKey: token });
    const r = await c.responses.retrieve(firstId);
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe("Hello from the binary.");
    proc = again.proc;
    url = again.url;
  });

  test("SIGTERM while the model streams: the stream ends with response.failed/shutdown and the partial answer is stored so", async () => {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const short = await serve({ SHUTDOWN_GRACE_MS: "200" });
    const words = Array.from({ length: 300 }, (_, i) => `token${i}`).join(" ");
    llm.enqueue({ text: words, chunkDelayMs: 20 });
    const c = new OpenAI({ baseURL: `${short.url}/api/v1`, apiKey: token });
    const stream = await c.responses.create({ model: "m", input: "this will be interrupted", stream: true });
    let id = "";
    let streamed = "";
    let last: any;
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") {
        streamed += event.delta;
        if (streamed.split(" ").length === 10) short.proc.kill("SIGTERM");
      }
      last = event;
    }
    expect(last.type).toBe("response.failed");
    expect(last.response.error.code).toBe("shutdown");
    expect(last.response.output[0].status).toBe("incomplete");
    expect(last.response.output[0].content[0].text).toBe(streamed);
    expect(words.startsWith(streamed)).toBe(true);
    expect(streamed.length).toBeLessThan(words.length / 2);
    expect(await short.proc.exited).toBe(0);

    const again = await serve();
    const stored = await new OpenAI({ baseURL: `${again.url}/api/v1`, apiKey: token }).responses.retrieve(id);
    expect(stored.status).toBe("failed");
    expect(stored.error?.code as string).toBe("shutdown");
    expect(stored.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    expect(stored.output_text).toBe(streamed);
    again.proc.kill("SIGTERM");
    expect(await again.proc.exited).toBe(0);
  }, 20_000);

  test("killed (SIGKILL) while a background turn streams: after a restart on the same home it is failed, not gone", async () => {
    const s = await serve();
    llm.enqueue({ text: Array.from({ length: 300 }, (_, i) => `token${i}`).join(" "), chunkDelayMs: 20 });
    const c = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: token });
    const acknowledged = await c.responses.create({ model: "m", input: "work on it in the background", background: true });
    expect(acknowledged.status).toBe("in_progress");
    await llm.waitForTextChunks(llm.textChunksSent() + 5);
    s.proc.kill("SIGKILL");
    await s.proc.exited;

    const again = await serve();
    const after = new OpenAI({ baseURL: `${again.url}/api/v1`, apiKey: token });
    const stored = await after.responses.retrieve(acknowledged.id);
    expect(stored).toMatchObject({ id: acknowledged.id, status: "failed", background: true, error: { code: "shutdown" } });
    // with its input, which the thread goes on from
    const input = await after.responses.inputItems.list(acknowledged.id);
    expect(input.data).toEqual([expect.objectContaining({ type: "message", role: "user", content: [expect.objectContaining({ text: "work on it in the background" })] })]);
    llm.enqueue({ text: "picked up again" });
    const next = await after.responses.create({ model: "m", input: "again, please", previous_response_id: acknowledged.id });
    expect(next.output_text).toBe("picked up again");
    expect(llm.lastChat().messages.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual(["work on it in the background", "again, please"]);
    again.proc.kill("SIGTERM");
    expect(await again.proc.exited).toBe(0);
  }, 20_000);

  test("killed (SIGKILL) after /api/chat/send's 202 while the model streams: the message is in the thread after a restart", async () => {
    const s = await serve();
    llm.enqueue({ text: Array.from({ length: 300 }, (_, i) => `token${i}`).join(" "), chunkDelayMs: 20 });
    const chat = (path: string, init: RequestInit = {}) => fetch(`${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
    const res = await chat(`${s.url}/api/chat/send`, { method: "POST", body: JSON.stringify({ content: "please remember the blue door" }) });
    expect(res.status).toBe(202);
    const sent = (await res.json()) as { thread_id: string; response_id: string };
    await llm.waitForTextChunks(llm.textChunksSent() + 5);
    s.proc.kill("SIGKILL");
    await s.proc.exited;

    const again = await serve();
    const history = await chat(`${again.url}/api/chat/history?thread_id=${sent.thread_id}`);
    expect(history.status).toBe(200);
    // the message, and the turn the kill cut short, said so
    const items = ((await history.json()) as any).items;
    expect(items.map((i: any) => [i.type, i.role ?? i.code, i.content])).toEqual([["message", "user", "please remember the blue door"], ["turn_error", "shutdown", undefined]]);
    const threads = ((await (await chat(`${again.url}/api/chat/threads`)).json()) as any).threads;
    expect(threads.map((t: any) => t.id)).toContain(sent.thread_id);
    const stored = await new OpenAI({ baseURL: `${again.url}/api/v1`, apiKey: token }).responses.retrieve(sent.response_id);
    expect(stored).toMatchObject({ status: "failed", error: { code: "shutdown" } });
    // and the conversation goes on from it
    llm.enqueue({ text: "The blue door, yes." });
    const next = await chat(`${again.url}/api/chat`, { method: "POST", body: JSON.stringify({ message: "what was it?", thread_id: sent.thread_id }) });
    expect(((await next.json()) as any).response).toBe("The blue door, yes.");
    expect(llm.lastChat().messages.map((m: any) => m.content)).toContain("please remember the blue door");
    again.proc.kill("SIGTERM");
    expect(await again.proc.exited).toBe(0);
  }, 20_000);
});
