#!/usr/bin/env bun
// The floor under bench/run.ts's figures: what a bare proxy on the same loopback takes of each
// target. `bun run bench` prints its figures beside the service's; `SERVICE_BIN=bench/floor.ts
// bun bench/run.ts` runs the whole bench against it.
//
// It answers POST /api/v1/responses by sending the model the request the service sends for the
// bench's turn (bench/model-request.json: the system prompt and the 12 built-in tools, 8.6 KB,
// as the scripted LLM received it from `GET /v1/_last_chat`) through the service's own LLM
// transport, and stores the turn with the service's own commit before it answers a
// non-streaming turn (FLOOR_STORE=0: nothing is stored). Nothing else: no token, no schema
// check, no thread or context, no events, no usage.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { itemId, newUuid, responseId } from "../src/conversation/ids";
import { http1Fetch } from "../src/llm/http1-fetch";
import { commitTurn } from "../src/store/conversations";
import { openLibsql } from "../src/store/libsql";
import { ensureOwner, OWNER_ID } from "../src/store/users";

const home = process.env.SERVICE_HOME!;
mkdirSync(home, { recursive: true });
const store = process.env.FLOOR_STORE !== "0";
const { db } = await openLibsql(`file:${join(home, "floor.db")}`);
await ensureOwner(db);
const request = (await Bun.file(join(import.meta.dir, "model-request.json")).json()) as { messages: { role: string; content: string }[] };
const completions = `${process.env.LLM_BASE_URL}/chat/completions`;

function commit(input: string, answer: string) {
  const thread = newUuid();
  return commitTurn(db, {
    thread: { id: thread, userId: OWNER_ID, isNew: true, tools: null, title: input, channel: "responses" },
    response: {
      id: responseId(newUuid(), thread),
      status: "completed",
      model: "scripted-model",
      error: null,
      inputTokens: 0,
      outputTokens: 0,
      cachedTokens: 0,
      reasoningTokens: 0,
      costMicroUsd: 0,
      meta: { store: true, model: "bench" } as never,
      createdAt: Math.floor(Date.now() / 1000),
      jobId: null,
    },
    items: [
      { seq: 0, item: { type: "message", id: itemId(), role: "user", content: input }, input: true },
      { seq: 1, item: { type: "message", id: itemId(), role: "assistant", content: answer }, input: false },
    ],
    gate: null,
  });
}

const encoder = new TextEncoder();
Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.GATEWAY_PORT),
  async fetch(req) {
    if (req.method !== "POST") return new Response("ok");
    const { input, stream } = (await req.json()) as { input: string; stream?: boolean };
    request.messages[request.messages.length - 1]!.content = input;
    const model = await http1Fetch(completions, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer bench" }, body: JSON.stringify(request) });
    const reader = model.body!.getReader();
    const decoder = new TextDecoder();
    if (!stream) {
      let answer = "";
      for (let r = await reader.read(); !r.done; r = await reader.read()) answer += decoder.decode(r.value, { stream: true });
      if (store) await commit(input, answer.slice(0, 64));
      return Response.json({ status: "completed", bytes: answer.length });
    }
    const frames = new ReadableStream<Uint8Array>({
      async pull(c) {
        const r = await reader.read();
        if (r.done) return c.close();
        const delta = decoder.decode(r.value, { stream: true });
        c.enqueue(encoder.encode(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta })}\n\n`));
      },
    });
    return new Response(frames, { headers: { "content-type": "text/event-stream" } });
  },
});
