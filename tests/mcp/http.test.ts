// A Streamable HTTP MCP server written here (SDK server transport on Bun.serve), used by the agent.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { TestService } from "../support/harness";
import { MODEL, asModelSees, startWithMcp, toolMessages, waitForServer } from "./support";

/** A stateful MCP server on loopback with one tool, `shout`; records what it was sent. */
function startHttpMcp(port = 0) {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const requests: { method: string; auth: string | null }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
      requests.push({ method: req.method, auth: req.headers.get("authorization") });
      if (req.headers.get("authorization") !== "Bearer mcp-secret") return new Response("unauthorized", { status: 401 });
      const id = req.headers.get("mcp-session-id");
      let transport = id ? sessions.get(id) : undefined;
      if (id && !transport) return Response.json({ jsonrpc: "2.0", error: { code: -32000, message: "unknown session" }, id: null }, { status: 404 });
      if (!transport) {
        const created = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, created),
          onsessionclosed: (sid) => void sessions.delete(sid),
        });
        const mcp = new Server({ name: "loud", version: "1.0.0" }, { capabilities: { tools: {} } });
        mcp.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: [
            {
              name: "shout",
              description: "Upper-cases a text",
              inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
            },
          ],
        }));
        mcp.setRequestHandler(CallToolRequestSchema, (r) => ({
          content: [{ type: "text", text: String((r.params.arguments as { text: string }).text).toUpperCase() }],
        }));
        await mcp.connect(created);
        transport = created;
      }
      return transport.handleRequest(req);
    },
  });
  return { server, requests, sessions, url: `http://127.0.0.1:${server.port}/mcp`, port: server.port! };
}

describe("a Streamable HTTP server", () => {
  let mcp = startHttpMcp();
  let t: TestService;
  beforeAll(async () => {
    t = await startWithMcp({
      loud: { url: mcp.url, headers: { Authorization: "Bearer mcp-secret" }, trusted: true },
      locked: { type: "http", url: mcp.url },
    });
  });
  afterAll(async () => {
    await t.stop();
    mcp.server.stop(true);
  });
  beforeEach(() => t.llm.reset());

  async function shout(text: string): Promise<string> {
    t.llm.enqueue({ toolCalls: [{ name: "mcp__loud__shout", arguments: { text } }] }, { text: "done" });
    const r = await t.respond({ model: MODEL, input: "shout" });
    expect(r.body.status).toBe("completed");
    return toolMessages(t)[0].content;
  }

  test("its tool is registered and runs with the configured headers", async () => {
    expect(await waitForServer(t, "loud", "ready")).toEqual({ name: "loud", transport: "http", state: "ready", tools: 1, error: null });
    expect(await shout("hello")).toBe(asModelSees(t, "mcp__loud__shout", "HELLO"));
    expect(mcp.requests.every((r) => r.auth === "Bearer mcp-secret" || r.auth === null)).toBe(true);
    expect(mcp.sessions.size).toBeGreaterThanOrEqual(1);
  });

  test("a server that refuses the client is reported failed with the HTTP error", async () => {
    const locked = await waitForServer(t, "locked", "failed");
    expect(locked.transport).toBe("http");
    expect(locked.tools).toBe(0);
    expect(locked.error).toContain("could not start");
    expect(locked.error).toContain("401");
  });

  test("when the server goes away the call fails, the server is reconnected once it is back", async () => {
    await waitForServer(t, "loud", "ready");
    const port = mcp.port;
    mcp.server.stop(true);
    const failed = await shout("anyone?");
    expect(failed).toContain("the MCP server loud went away during the call (request failed");
    const down = (await waitForServer(t, "loud", ["restarting", "failed"])).state;
    expect(["restarting", "failed"]).toContain(down);

    mcp = startHttpMcp(port);
    await waitForServer(t, "loud", "ready");
    expect(await shout("back")).toBe(asModelSees(t, "mcp__loud__shout", "BACK"));
  });

  test("stop() ends the session with a DELETE", async () => {
    await waitForServer(t, "loud", "ready");
    await t.service.services.mcp!.stop();
    expect(mcp.requests.some((r) => r.method === "DELETE")).toBe(true);
  });
});
