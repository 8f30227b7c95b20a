// The local routes the web UI, the TUI and the CLI read declare their replies' schemas (the
// clients' types come from them), and a reply that breaks its schema is the service's fault.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { createApp } from "../../src/app";
import { startTestService, type TestService } from "../support/harness";

/** The JSON routes the clients read, as Elysia names them. */
const DECLARED = [
  "GET /api/status",
  "POST /api/chat",
  "POST /api/chat/send",
  "GET /api/chat/threads",
  "PATCH /api/chat/threads/:thread_id",
  "GET /api/chat/history",
  "POST /api/chat/threads/:thread_id/compact",
  "POST /api/chat/threads/:thread_id/regenerate",
  "POST /api/chat/threads/:thread_id/edit",
  "POST /api/chat/threads/:thread_id/branches",
  "GET /api/chat/approvals",
  "POST /api/chat/approvals/:thread_id",
  "GET /api/jobs",
  "GET /api/egress",
  "GET /api/usage",
  "GET /api/memory",
  "GET /api/memory/tree",
  "GET /api/memory/read",
  "POST /api/memory/write",
  "GET /api/routines",
  "POST /api/routines",
  "POST /api/routines/preview",
  "GET /api/routines/:id",
  "PATCH /api/routines/:id",
  "POST /api/routines/:id/run",
  "GET /api/routines/:id/runs",
  "GET /api/webchat/v2/admin/users",
  "POST /api/webchat/v2/admin/users",
  "PATCH /api/webchat/v2/admin/users/:user_id",
  "POST /api/webchat/v2/admin/users/:user_id/token",
];

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

test("each route the clients read declares its reply", () => {
  const routes = createApp(t.service.services).routes as { method: string; path: string; hooks?: { response?: unknown } }[];
  const declared = new Set(routes.filter((r) => r.hooks?.response).map((r) => `${r.method} ${r.path}`));
  expect(DECLARED.filter((r) => !declared.has(r))).toEqual([]);
});

test("a reply that breaks its declared schema is a 500 in the envelope, not the caller's 400", async () => {
  const app = createApp(t.service.services).get("/broken", () => ({ count: "three" }) as unknown as { count: number }, {
    response: Type.Object({ count: Type.Integer() }),
  });
  const res = await app.handle(new Request("http://127.0.0.1/broken"));
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({ error: { message: "Internal server error", type: "server_error", code: null } });
});

// Elysia builds each route's handler from what its hooks name: a hook given the context whole
// makes every request of the route parse its cookies and copy its headers (the turn's route did,
// about 10 µs a turn). No route reads cookies or the header copy through the context.
test("no route's handler parses cookies or copies the headers for a hook that does not use them", () => {
  const routes = createApp(t.service.services).routes as { method: string; path: string; compile(): unknown }[];
  const whole = routes.filter((r) => /parseCookie|headers\.toJSON\(\)/.test(String(r.compile()))).map((r) => `${r.method} ${r.path}`);
  expect(whole).toEqual([]);
  expect(routes.length).toBeGreaterThan(50);
});
