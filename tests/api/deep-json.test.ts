// A JSON body nested deeper than 128 levels is a 400 in the route's own envelope, before it is
// parsed or validated, on every route that takes JSON (a 50,000-deep array once overflowed
// the stack inside validation: a 500). ROUTES lists them; the last test fails when a route
// that takes a JSON body is missing from it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { MAX_JSON_DEPTH, nestedTooDeep } from "../../src/http/body";
import { startTestService, type TestService } from "../support/harness";

const SECRET = "deep-json-secret-0123456789";

/** Every gateway route that takes a JSON body, as Elysia names it. */
const ROUTES = [
  "POST /api/v1/responses",
  "POST /v1/responses",
  "POST /api/v1/responses/input_tokens",
  "POST /v1/responses/input_tokens",
  "POST /api/v1/responses/compact",
  "POST /v1/responses/compact",
  "POST /api/v1/conversations",
  "POST /v1/conversations",
  "POST /api/v1/conversations/:id",
  "POST /v1/conversations/:id",
  "POST /api/v1/conversations/:id/items",
  "POST /v1/conversations/:id/items",
  "POST /api/v1/chat/completions",
  "POST /v1/chat/completions",
  "POST /api/webchat/v2/admin/users",
  "PATCH /api/webchat/v2/admin/users/:user_id",
  "POST /api/chat",
  "POST /api/chat/send",
  "POST /api/chat/approvals/:thread_id",
  "PATCH /api/chat/threads/:thread_id",
  "POST /api/chat/threads/:thread_id/edit",
  "POST /api/chat/threads/:thread_id/branches",
  "POST /api/memory/write",
  "POST /api/extensions/:name/key",
  "POST /api/routines",
  "POST /api/routines/preview",
  "PATCH /api/routines/:id",
];

const nested = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);
/** An object whose field holds arrays: `depth` levels in all, the object counted. */
const body = (depth: number) => `{"model":"m","input":"hi","x":${nested(depth - 1)}}`;

describe("JSON nested too deep", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: SECRET, HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" } });
  });
  afterAll(() => t.stop());

  const envelope = { error: { message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`, type: "invalid_request_error", code: null } };

  for (const route of ROUTES) {
    test(`${route}: 400 in the envelope at 50,000 and at ${MAX_JSON_DEPTH + 1} levels`, async () => {
      const [method, path] = route.split(" ") as [string, string];
      for (const raw of [nested(50_000), body(MAX_JSON_DEPTH + 1)]) {
        const res = await t.api(path.replace(/:\w+/g, "x"), { method, body: raw, headers: { "content-type": "application/json" } });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(envelope);
      }
    });
  }

  test(`${MAX_JSON_DEPTH} levels are read (and judged as any body is)`, async () => {
    const res = await t.api("/api/v1/responses", { method: "POST", body: body(MAX_JSON_DEPTH), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("completed");
  });

  test("the webhook listener: 400 {error}, and no job", async () => {
    const before = ((await (await t.api("/api/jobs")).json()) as any).jobs.length;
    // 30,000 deep: what fits in the listener's 64 KB
    for (const raw of [nested(30_000), `{"user_id":"u","message":"m","metadata":{"a":${nested(MAX_JSON_DEPTH - 1)}}}`]) {
      const res = await fetch(`${t.service.webhookUrl}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-webhook-secret": SECRET }, body: raw });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: `body is nested deeper than ${MAX_JSON_DEPTH} levels` });
    }
    expect(((await (await t.api("/api/jobs")).json()) as any).jobs.length).toBe(before);
  });

  test("nothing deep reached the model or the store", async () => {
    expect(t.llm.chatRequests().every((r) => !JSON.stringify(r.body).includes("[[[[["))).toBe(true);
    expect(((await (await t.api("/api/chat/threads")).json()) as any).threads).toHaveLength(1);
  });

  test("the list names every route that takes a JSON body", () => {
    const withBody = (createApp(t.service.services).routes as { method: string; path: string; hooks?: { body?: unknown } }[])
      .filter((r) => r.hooks?.body)
      .map((r) => `${r.method} ${r.path}`);
    expect(withBody.toSorted()).toEqual(ROUTES.toSorted());
  });
});

test("depth is read off the brackets outside strings", () => {
  expect(nestedTooDeep(nested(128))).toBe(false);
  expect(nestedTooDeep(nested(129))).toBe(true);
  expect(nestedTooDeep(`{"a":"${"[".repeat(500)}"}`)).toBe(false);
  expect(nestedTooDeep(`{"a":"\\\\"}${"{".repeat(129)}`)).toBe(true);
  expect(nestedTooDeep(`["\\"${"[".repeat(200)}"]`)).toBe(false);
});
