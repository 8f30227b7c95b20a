// `bun run bench` (part): what the LLM client's own reading of a stream costs. The same
// recorded answers (plain text, a leading <think> block, parallel tool calls with the name
// on every delta) are read N times through `openAiLlm` (tool calls assembled, reasoning kept
// out of the answer, length cuts noticed) and through the openai SDK's own stream iteration
// (what the client did before it read the body itself), in alternation, against the scripted
// LLM on loopback. The server's time is in both; the difference is the client's own work
// (the assembling) less what its own reading of the body saves.
import { openAiLlm } from "../src/llm/openai";
import OpenAI from "openai";
import { pct } from "./support";
import * as wire from "../tests/support/provider-wires";
import { startScriptedLLM, type Step } from "../tests/support/scripted-llm";

const ROUNDS = Number(process.env.BENCH_LLM_ROUNDS ?? 400);
const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
const shapes: [string, () => Step][] = [
  ["200 text deltas", () => wire.lengthCut(words)],
  ["<think> then 200 deltas", () => wire.thinkTags("Let me think about it carefully.", words)],
  ["2 calls, name on every delta", () => wire.nameOnEveryDelta([{ name: "file_read", arguments: { path: "a.md" } }, { name: "file_write", arguments: { path: "b.md", content: words } }])],
];

const server = await startScriptedLLM({ record: false });
const llm = openAiLlm({ baseUrl: server.url, apiKey: "k", model: "m", maxRetries: 0 });
const sdk = new OpenAI({ baseURL: server.url, apiKey: "k", maxRetries: 0 });
const request = { messages: [{ role: "user" as const, content: "hi" }], tools: [] };

async function viaClient(): Promise<number> {
  const t = performance.now();
  for await (const _ of llm.stream({ ...request, signal: new AbortController().signal }));
  return performance.now() - t;
}

async function viaSdk(): Promise<number> {
  const t = performance.now();
  const stream = await sdk.chat.completions.create({ model: "m", messages: request.messages, stream: true });
  for await (const _ of stream);
  return performance.now() - t;
}

const rows: string[] = [];
for (const [name, shape] of shapes) {
  const client: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    server.enqueue(shape());
    client.push(await viaClient());
    server.enqueue(shape());
    plain.push(await viaSdk());
  }
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  rows.push(`| ${name} | ${ms(pct(client, 50))} | ${ms(pct(plain, 50))} | ${ms(pct(client, 50) - pct(plain, 50))} |`);
}
await server.close();
console.log(`\nLLM client, ${ROUNDS} steps per shape, p50 per step (the scripted server's time in both):\n`);
console.log("| stream | through the client | the SDK's own iteration | the difference |\n|---|---|---|---|");
for (const r of rows) console.log(r);
