// The compiled binary against the wire shapes real OpenAI-compatible servers send
// (tests/support/provider-wires.ts, each shape with the public issue or doc it comes from),
// through the Responses API (the openai SDK, streamed and not), the chat endpoints and a
// webhook job, with caller, built-in and MCP tools.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureBinary, listeningUrl, root, serveUntil, serveEnv, webhookUrl } from "../support/binary";
import { chatEvents } from "../support/chat-events";
import type { TestService } from "../support/harness";
import * as wire from "../support/provider-wires";
import { startScriptedLLM, type ScriptedLLM, type Step } from "../support/scripted-llm";
import { until } from "../support/until";

const TOKEN = "wire-test-instance-token-0123456789abcdef";
const SECRET = "wire-test-webhook-secret-0123456789";
const everything = { command: process.execPath, args: [join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"], trusted: true };

let llm: ScriptedLLM;
let dir: string;
let home: string;
let proc: Subprocess;
let url: string;
let webhook: string;
let client: OpenAI;

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-wires-"));
  home = join(dir, "home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ mcpServers: { everything } }));
  const env = serveEnv(
    { dir, home, token: TOKEN, llmUrl: llm.url, model: "wire-model", webhookSecret: SECRET },
    { LLM_MAX_RETRIES: "0", RESPONSES_RATE_LIMIT: "0" },
  );
  const s = await serveUntil(["serve"], { cwd: dir, env }, (out) => {
    const gateway = listeningUrl(out);
    const hook = webhookUrl(out);
    return gateway && hook ? { gateway, hook } : undefined;
  });
  proc = s.proc;
  url = s.ready.gateway;
  webhook = s.ready.hook;
  client = new OpenAI({ baseURL: `${url}/api/v1`, apiKey: TOKEN });
  // the MCP server's tools are in place before the first turn that needs them
  await until("the MCP server to be ready", async () => ((await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as any).mcp?.servers?.[0]?.state === "ready", { timeoutMs: 15_000, everyMs: 50 });
});

afterAll(async () => {
  proc?.kill("SIGTERM");
  await proc?.exited;
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Just what the chat-events helper uses of a test service, for the binary. */
const binaryService = () =>
  ({
    token: TOKEN,
    api: (path: string, init: RequestInit = {}) => fetch(url + path, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers ?? {}) } }),
  }) as unknown as TestService;

const weather = { type: "function" as const, name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: false };
const paris = { name: "get_weather", arguments: { city: "Paris" } };
const rome = { name: "get_weather", arguments: { city: "Rome, Lazio" } };

const habits: [string, (calls: wire.WireCall[]) => Step][] = [
  ["name on every delta", (c) => wire.nameOnEveryDelta(c)],
  ["no index", (c) => wire.noIndex(c)],
  ["index 0 with new ids", wire.indexZero],
  ["arguments as an object", wire.argumentsAsObject],
  ["Ollama's one chunk", wire.ollamaOneChunk],
  ["a JSON completion", (c) => wire.wholeCompletion({ calls: c })],
];

const calls = (r: { output: any[] }) => r.output.filter((i) => i.type === "function_call").map((i) => ({ name: i.name, arguments: JSON.parse(i.arguments) }));
const toolMessages = () => llm.lastChat().messages.filter((m: any) => m.role === "tool");

describe("caller tools: the caller receives the right function_call, both calls of one answer", () => {
  for (const [habit, shape] of habits) {
    for (const stream of [false, true]) {
      test(`${habit}${stream ? ", streamed" : ""}`, async () => {
        llm.enqueue(shape([paris, rome]));
        const create = (body: { model: string; input: OpenAI.Responses.ResponseInput | string; previous_response_id?: string; tools: (typeof weather)[] }) =>
          stream ? client.responses.stream(body).finalResponse() : client.responses.create(body);
        const first = await create({ model: "default", input: "Weather in Paris and Rome?", tools: [weather] });
        expect(calls(first)).toEqual([paris]);
        const callA = first.output.find((i) => i.type === "function_call")!;
        // the second call of the same answer comes on the next round trip, without asking the model again
        const before = llm.chatRequests().length;
        const second = await create({ model: "default", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: (callA as any).call_id, output: "18 C" }], tools: [weather] });
        expect(calls(second)).toEqual([rome]);
        expect(llm.chatRequests().length).toBe(before);
        llm.enqueue({ text: "Paris 18 C, Rome 24 C." });
        const callB = second.output.find((i) => i.type === "function_call")!;
        const third = await create({ model: "default", previous_response_id: second.id, input: [{ type: "function_call_output", call_id: (callB as any).call_id, output: "24 C" }], tools: [weather] });
        expect(third.output_text).toBe("Paris 18 C, Rome 24 C.");
        // the model's history holds both calls, by name, with their arguments and outputs
        const sent = llm.lastChat().messages;
        const sentCalls = sent.flatMap((m: any) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
        expect(sentCalls.map((c: any) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) }))).toEqual([paris, rome]);
        expect(toolMessages().map((m: any) => m.content)).toEqual(["18 C", "24 C"]);
      });
    }
  }
});

describe("built-in and MCP tools run under every habit", () => {
  for (const [habit, shape] of habits) {
    test(habit, async () => {
      const file = `wire-${habit.replace(/\W+/g, "-")}.txt`;
      llm.enqueue(
        shape([
          { name: "file_write", arguments: { path: file, content: `written under ${habit}` } },
          { name: "mcp__everything__echo", arguments: { message: `echo ${habit}` } },
        ]),
        { text: "Both done." },
      );
      const r = await client.responses.create({ model: "default", input: "Write the file and echo." });
      expect(r.status).toBe("completed");
      expect(r.output_text).toBe("Both done.");
      const outputs = toolMessages().map((m: any) => m.content as string);
      expect(outputs).toHaveLength(2);
      expect(outputs[0]).not.toContain("Error");
      expect(outputs[1]).toContain(`echo ${habit}`);
      const written = [join(home, "files", "owner", file), join(home, "files", file)].find(existsSync);
      expect(written && readFileSync(written, "utf8")).toBe(`written under ${habit}`);
    });
  }
});

describe("reasoning is never the answer", () => {
  const thoughts = "The user asks for a greeting. Keep it short.";
  const reasoningSteps: [string, Step][] = [
    ["<think> tags", wire.thinkTags(thoughts, "Hello!")],
    ["<thinking> tags", wire.thinkTags(thoughts, "Hello!", { tag: "thinking" })],
    ["reasoning_content", wire.reasoningField("reasoning_content", thoughts, "Hello!")],
    ["reasoning", wire.reasoningField("reasoning", thoughts, "Hello!")],
    ["a JSON completion with <think>", wire.wholeCompletion({ content: `<think>${thoughts}</think>\nHello!` })],
  ];
  for (const [name, step] of reasoningSteps) {
    test(`${name}: not in output_text, the stored message or the history sent back`, async () => {
      llm.enqueue(step);
      const deltas: string[] = [];
      const s = client.responses.stream({ model: "default", input: "Greet me" });
      s.on("response.output_text.delta", (e) => deltas.push(e.delta));
      const r = await s.finalResponse();
      expect(r.output_text).toBe("Hello!");
      expect(deltas.join("")).toBe("Hello!");
      expect(JSON.stringify(await client.responses.retrieve(r.id))).not.toContain("Keep it short");
      llm.enqueue({ text: "Sure." });
      await client.responses.create({ model: "default", input: "Again?", previous_response_id: r.id });
      const history = JSON.stringify(llm.lastChat().messages);
      expect(history).toContain("Hello!");
      expect(history).not.toContain("Keep it short");
      expect(history).not.toContain("think>");
    });
  }

  test("the chat endpoints: the answer is clean, the reasoning streams as reasoning.delta", async () => {
    const events = await chatEvents(binaryService());
    llm.enqueue(wire.thinkTags(thoughts, "Hi from chat."));
    const sent = (await (await binaryService().api("/api/chat/send", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ content: "Hello" }) })).json()) as any;
    const done = await events.until((e) => e.type === "turn.completed" && e.thread_id === sent.thread_id);
    expect(done.status).toBe("completed");
    const mine = events.seen.filter((e) => e.thread_id === sent.thread_id);
    expect(mine.filter((e) => e.type === "reasoning.delta").map((e) => e.delta).join("").trim()).toBe(thoughts);
    expect(mine.filter((e) => e.type === "message.delta").map((e) => e.delta).join("")).toBe("Hi from chat.");
    await events.close();
    const history = (await (await binaryService().api(`/api/chat/history?thread_id=${sent.thread_id}`)).json()) as any;
    expect(history.items.map((i: any) => i.content)).toEqual(["Hello", "Hi from chat."]);

    llm.enqueue(wire.reasoningField("reasoning", thoughts, "Sync answer."));
    const sync = (await (await binaryService().api("/api/chat", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "Hi" }) })).json()) as any;
    expect(sync.response).toBe("Sync answer.");
  });

  test("a webhook job: a tool call in one chunk, then a thinking answer; the job's answer is clean", async () => {
    llm.enqueue(wire.ollamaOneChunk([{ name: "mcp__everything__echo", arguments: { message: "from the webhook" } }]), wire.thinkTags(thoughts, "The heater is on."));
    const posted = await fetch(`${webhook}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
      body: JSON.stringify({ user_id: "automation", message: "Turn the heater on" }),
    });
    expect(posted.status).toBe(202);
    const { job_id } = (await posted.json()) as any;
    const job = await until("the job to finish", async () => {
      const job: any = await (await fetch(`${webhook}/jobs/${job_id}`, { headers: { "x-webhook-secret": SECRET } })).json();
      return (job.status === "completed" || job.status === "failed") && job;
    });
    expect(job.status).toBe("completed");
    expect(job.response).toBe("The heater is on.");
    expect(toolMessages().at(-1).content).toContain("from the webhook");
  });
});

describe("an answer cut at the token limit", () => {
  test("create, stream and retrieve say incomplete: max_output_tokens, the status stays completed", async () => {
    llm.enqueue(wire.lengthCut("The first half of a long"));
    const r = await client.responses.create({ model: "default", input: "Write a lot" });
    expect(r.status).toBe("completed");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    expect(r.output_text).toBe("The first half of a long");
    const again = await client.responses.retrieve(r.id);
    expect(again.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(again.output[0]).toMatchObject({ status: "incomplete" });

    llm.enqueue(wire.lengthCut("Cut while streaming"));
    const done: string[] = [];
    const s = client.responses.stream({ model: "default", input: "Write a lot" });
    s.on("response.output_item.done", (e) => done.push((e.item as any).status));
    const streamed = await s.finalResponse();
    expect(streamed.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(done).toEqual(["incomplete"]);

    // calls the model was still writing when it was cut do not run
    llm.enqueue(wire.wholeCompletion({ calls: [{ name: "file_write", arguments: { path: "never.txt", content: "x" } }], finish: "length" }));
    const cut = await client.responses.create({ model: "default", input: "Write a file" });
    expect(cut.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect([join(home, "files", "owner", "never.txt"), join(home, "files", "never.txt")].some(existsSync)).toBe(false);
  });
});
