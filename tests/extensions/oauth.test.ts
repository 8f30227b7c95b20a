// OAuth 2 for an extension, against an authorization server on loopback: a tool of an
// unconnected extension pauses its turn on an OAuth gate (the Responses API fails it with
// auth_required and a link to the web UI); connect → authorize → callback resolves the gate
// and the waiting turn goes on with the user's access token; tokens are per user, refreshed
// when they expire, and forgotten when the refresh is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { threadOfResponse } from "../../src/conversation/ids";
import type { TestService } from "../support/harness";
import { CLIENT_ID, startAuthorizationServer, writeGithubExtension, type AuthorizationServer } from "./oauth-server";
import { allLlmText, chatEvents, MODEL, startWithExtensions, tempDir, toolMessages } from "./support";

const TOOL = "ext__github__fetch_me";

describe("an extension that connects with OAuth", () => {
  let t: TestService;
  let as: AuthorizationServer;
  let tmp: ReturnType<typeof tempDir>;
  let member: { token: string; user: any };
  /** The thread of the first test, left waiting for the connection. */
  let firstThread: string;

  beforeAll(async () => {
    tmp = tempDir();
    as = startAuthorizationServer();
    const source = writeGithubExtension(tmp.dir, as);
    t = await startWithExtensions([source]);
    member = await t.createUser("member");
  });
  afterAll(async () => {
    await t.stop();
    as.stop();
    tmp.cleanup();
  });

  /** A Responses turn in which the model calls the extension's tool. */
  async function turn(token = t.token) {
    t.llm.enqueue({ text: "Let me look you up.", toolCalls: [{ name: TOOL, arguments: {} }] });
    const r = await t.respond({ model: MODEL, input: "who am I?" }, token);
    expect(r.status).toBe(200);
    return { body: r.body, threadId: threadOfResponse(r.body.id)! };
  }

  /** What a browser does with the authorize URL: the server redirects back to the callback, which is followed. */
  async function authorizeInBrowser(authorizeUrl: string): Promise<Response> {
    const consent = await fetch(authorizeUrl, { redirect: "manual" });
    expect(consent.status).toBe(302);
    const callback = consent.headers.get("location")!;
    expect(callback).toStartWith(`${t.url}/oauth/callback?`);
    return fetch(callback);
  }

  async function connect(token = t.token): Promise<string> {
    const res = await t.api("/api/extensions/github/connect", { method: "POST", token });
    expect(res.status).toBe(200);
    return ((await res.json()) as any).authorize_url;
  }

  test("the Responses turn fails with auth_required, pointing at the web UI; the tool did not run", async () => {
    t.llm.reset();
    const { body, threadId } = await turn();
    firstThread = threadId;
    expect(body.status).toBe("failed");
    expect(body.error.code).toBe("auth_required");
    expect(body.error.message).toContain("github");
    expect(body.error.message).toContain("web UI");
    expect(body.error.message).toContain(`${t.url}/extensions/connect/github?thread=${threadId}`);
    expect(as.log.meAuth).toHaveLength(0);
    expect(t.llm.chatRequests()).toHaveLength(1);
    // the leading prose is kept; nothing of the gate appears in the output
    expect(body.output.map((o: any) => o.type)).toEqual(["message"]);

    // the thread waits: a new message on it is refused, naming the connection to make
    const next = await t.respond({ model: MODEL, previous_response_id: body.id, input: "hello?" });
    expect(next.status).toBe(400);
    expect(next.body.error.message).toContain("connection of the extension github");
    expect(next.body.error.message).toContain(`/extensions/connect/github`);

    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any;
    expect(history.waiting).toMatchObject({ kind: "oauth", tool: TOOL, extension: "github", connect_url: `${t.url}/extensions/connect/github?thread=${threadId}` });
    const list = (await (await t.api("/api/extensions")).json()) as any;
    expect(list.extensions[0]).toMatchObject({ name: "github", credentials: "oauth2", authorized: false });
  });

  test("the connect page the message links to is served, with the script that starts the flow", async () => {
    const page = await fetch(`${t.url}/extensions/connect/github?thread=x`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script src="/extensions/connect.js"></script>');
    const script = await (await fetch(`${t.url}/extensions/connect.js`)).text();
    expect(script).toContain("/connect");
    expect(script).toContain("service.token");
  });

  test("connect → authorize → callback: the waiting turn goes on with the user's access token", async () => {
    t.llm.reset();
    const { threadId } = await turn();
    const events = await chatEvents(t);
    const authorizeUrl = await connect();
    const u = new URL(authorizeUrl);
    expect(`${u.origin}${u.pathname}`).toBe(`${as.origin}/authorize`);
    expect(u.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(u.searchParams.get("redirect_uri")).toBe(`${t.url}/oauth/callback`);
    expect(u.searchParams.get("scope")).toBe("profile read");
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(u.searchParams.get("state")!.length).toBeGreaterThanOrEqual(43);

    // two threads wait on github: this one and the first test's
    t.llm.enqueue({ text: "You are alice." }, { text: "You are alice." });
    const page = await authorizeInBrowser(authorizeUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("The extension github is connected. You can close this tab.");

    const completed = new Map<string, any>();
    await events.until((e) => {
      if (e.type === "turn.completed") completed.set(e.thread_id, e);
      return completed.has(threadId) && completed.has(firstThread);
    });
    expect(completed.get(threadId)).toMatchObject({ status: "completed", error: null, waiting: null });
    expect(completed.get(firstThread)).toMatchObject({ status: "completed", error: null, waiting: null });
    const ran = events.seen.find((e) => e.type === "tool.completed" && e.thread_id === threadId);
    expect(ran.output).toContain('{\\"user\\":\\"alice\\"}');
    await events.close();

    // the token endpoint checked the PKCE verifier; the resource got the access token
    expect(as.log.badVerifiers).toBe(0);
    const [issued] = [...as.accessTokens.keys()];
    expect(as.log.meAuth).toContain(`Bearer ${issued}`);
    // the model got the result, never the token
    const tool = toolMessages(t).find((m) => m.content.includes("alice"));
    expect(tool).toBeDefined();
    expect(allLlmText(t)).not.toContain(issued!);
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any;
    expect(history.waiting).toBeNull();
    expect(JSON.stringify(history.items)).toContain("You are alice.");

    const list = (await (await t.api("/api/extensions")).json()) as any;
    expect(list.extensions[0].authorized).toBe(true);
    await t.service.services.agent.idle();
  });

  test("once connected, a Responses turn runs the tool at once", async () => {
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] }, { text: "alice again" });
    const r = await t.respond({ model: MODEL, input: "who am I now?" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)[0].content).toContain('"status":200');
    expect(toolMessages(t)[0].content).toContain('{\\"user\\":\\"alice\\"}');
  });

  test("a callback is good once: a replayed or unknown state, or a refusal, connects nothing", async () => {
    const authorizeUrl = await connect();
    const consent = await fetch(authorizeUrl, { redirect: "manual" });
    const callback = consent.headers.get("location")!;
    expect((await fetch(callback)).status).toBe(200);
    const replay = await fetch(callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("unknown, was already used or has expired");
    const forged = await fetch(`${t.url}/oauth/callback?code=x&state=forged`);
    expect(forged.status).toBe(400);
    const denied = await fetch(`${t.url}/oauth/callback?error=access_denied&state=${new URL(await connect()).searchParams.get("state")}`);
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain("access_denied");
    // connecting needs a signed-in user; the callback does not
    expect((await t.api("/api/extensions/github/connect", { method: "POST", token: null })).status).toBe(401);
    expect((await t.api("/api/extensions/nosuch/connect", { method: "POST" })).status).toBe(404);
  });

  test("tokens are each user's own, refreshed when expired, and forgotten when the refresh is refused", async () => {
    // alice's connection does not count for the member
    t.llm.reset();
    const first = await turn(member.token);
    expect(first.body.error.code).toBe("auth_required");

    // the member connects as bob; the waiting turn goes on with bob's token
    as.user = "bob";
    t.llm.enqueue({ text: "You are bob." });
    const events = await chatEvents(t, member.token);
    expect((await authorizeInBrowser(await connect(member.token))).status).toBe(200);
    const done = await events.until((e) => e.type === "turn.completed" && e.thread_id === first.threadId);
    expect(done.status).toBe("completed");
    await events.close();
    const bobs = as.log.meAuth.at(-1)!.slice("Bearer ".length);
    expect(as.accessTokens.get(bobs)).toBe("bob");

    // bob's access token expires: the next call refreshes it first, once, and uses the new one
    const [refreshToken] = [...as.refreshTokens].find(([, user]) => user === "bob")!;
    const store = t.service.services.extensions!.credentials;
    await store.saveTokens("github", member.user.user_id, { access_token: bobs, refresh_token: refreshToken, expires_at: Date.now() - 1 });
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] }, { text: "still bob" });
    const refreshed = await t.respond({ model: MODEL, input: "and now?" }, member.token);
    expect(refreshed.body.status).toBe("completed");
    expect(as.log.refreshes).toBe(1);
    expect(as.log.tokenRequests.at(-1)!.get("grant_type")).toBe("refresh_token");
    const renewed = as.log.meAuth.at(-1)!.slice("Bearer ".length);
    expect(renewed).not.toBe(bobs);
    expect(as.accessTokens.get(renewed)).toBe("bob");
    expect(allLlmText(t)).not.toContain(renewed);

    // the grant is revoked: the next refresh fails, the grant is forgotten, the turn waits again
    await store.saveTokens("github", member.user.user_id, { access_token: renewed, refresh_token: [...as.refreshTokens].find(([, u]) => u === "bob")![0], expires_at: Date.now() - 1 });

    // the grant is revoked: the refresh fails, the grant is forgotten, the turn waits again
    as.refuseRefresh = true;
    t.llm.reset();
    const again = await turn(member.token);
    expect(again.body.error.code).toBe("auth_required");
    expect(t.logs.some((l) => l.includes("extension github: the token endpoint refused: invalid_grant"))).toBe(true);
    const list = (await (await t.api("/api/extensions", { token: member.token })).json()) as any;
    expect(list.extensions[0].authorized).toBe(false);
    // alice's own grant is untouched
    expect(((await (await t.api("/api/extensions")).json()) as any).extensions[0].authorized).toBe(true);
  });
});

describe("an OAuth extension tool that also needs approval, in the web UI", () => {
  let t: TestService;
  let as: AuthorizationServer;
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    tmp = tempDir();
    as = startAuthorizationServer();
    const source = writeGithubExtension(tmp.dir, as, []);
    t = await startWithExtensions([source], { env: { TOOLS_ASK: TOOL } });
  });
  afterAll(async () => {
    await t.stop();
    as.stop();
    tmp.cleanup();
  });

  test("the turn waits to be connected first, then for approval, then runs the tool", async () => {
    const events = await chatEvents(t);
    t.llm.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] });
    const chat = await t.api("/api/chat", { method: "POST", json: { message: "who am I?" } });
    const first = (await chat.json()) as any;
    // the web UI shows gates: the turn completes, waiting on the connection
    expect(first.status).toBe("completed");
    const gate = await events.until((e) => e.type === "auth.required");
    expect(gate).toMatchObject({ thread_id: first.thread_id, tool: TOOL, extension: "github", connect_url: `${t.url}/extensions/connect/github?thread=${first.thread_id}` });
    expect(await events.until((e) => e.type === "turn.completed")).toMatchObject({ waiting: "oauth" });
    // an approval of a call that waits on a connection is refused
    expect((await t.api(`/api/chat/approvals/${first.thread_id}`, { method: "POST", json: { decision: "approve" } })).status).toBe(400);

    const connect = (await (await t.api("/api/extensions/github/connect", { method: "POST" })).json()) as any;
    const consent = await fetch(connect.authorize_url, { redirect: "manual" });
    expect((await fetch(consent.headers.get("location")!)).status).toBe(200);
    // connected: the turn goes on to the approval, and the tool has not run yet
    expect(await events.until((e) => e.type === "approval.required")).toMatchObject({ thread_id: first.thread_id, tool: TOOL });
    expect(await events.until((e) => e.type === "turn.completed")).toMatchObject({ status: "completed", waiting: "approval" });
    expect(as.log.meAuth).toHaveLength(0);

    t.llm.enqueue({ text: "You are alice." });
    const approved = await t.api(`/api/chat/approvals/${first.thread_id}`, { method: "POST", json: { decision: "approve" } });
    const body = (await approved.json()) as any;
    expect(body).toMatchObject({ status: "completed", output_text: "You are alice.", pending_approval: null });
    expect(as.log.meAuth).toEqual([`Bearer ${[...as.accessTokens.keys()][0]}`]);
    await events.close();
  });
});
