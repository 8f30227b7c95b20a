// The agent's mission tools: mission_create asks the user's approval by default (an operator
// can say otherwise in tools.approval), then creates a routine of the user's; mission_list
// and mission_cancel see only the user's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestService, type TestService } from "../support/harness";

const toolOutputs = (t: TestService) => (t.llm.lastChat().messages as any[]).filter((m) => m.role === "tool").map((m) => m.content as string);

async function chat(t: TestService, message: string, token?: string) {
  const res = await t.api("/api/chat", { method: "POST", json: { message }, token });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

const routinesOf = async (t: TestService, token?: string) => ((await (await t.api("/api/routines", { token })).json()) as any).routines as any[];

describe("mission tools, default policy", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("mission_create waits for the user's approval, then creates the routine", async () => {
    t.llm.reset();
    t.llm.enqueue(
      { toolCalls: [{ name: "mission_create", arguments: { schedule: "0 7 * * 1-5", timezone: "Europe/Berlin", prompt: "Remind me to water the plants.", name: "Plants" } }] },
      { text: "Done: every weekday at 7." },
    );
    const r = await chat(t, "remind me every weekday at 7 to water the plants");
    const approvals = ((await (await t.api("/api/chat/approvals")).json()) as any).approvals;
    expect(approvals).toEqual([expect.objectContaining({ thread_id: r.thread_id, tool: "mission_create" })]);
    expect(await routinesOf(t)).toEqual([]);
    const decided = await t.api(`/api/chat/approvals/${r.thread_id}`, { method: "POST", json: { decision: "approve" } });
    expect(((await decided.json()) as any).output_text).toBe("Done: every weekday at 7.");
    const [routine] = await routinesOf(t);
    expect(routine).toMatchObject({ name: "Plants", schedule: "0 7 * * 1-5", timezone: "Europe/Berlin", prompt: "Remind me to water the plants.", enabled: true });
    expect(toolOutputs(t).at(-1)).toContain(`Scheduled mission ${routine.id} "Plants": At 07:00, Monday through Friday (Europe/Berlin)`);
  });

  test("mission_list and mission_cancel need no approval and see only the user's own", async () => {
    const other = await t.createUser();
    const mine = (await routinesOf(t))[0];
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: "mission_list", arguments: {} }] }, { text: "listed" });
    await chat(t, "what missions do I have?", other.token);
    expect(toolOutputs(t).at(-1)).toContain("The user has no missions.");
    t.llm.enqueue({ toolCalls: [{ name: "mission_cancel", arguments: { id: mine.id } }] }, { text: "tried" });
    await chat(t, "cancel that one", other.token);
    expect(toolOutputs(t).at(-1)).toContain(`No routine found with id ${mine.id}`);
    expect(await routinesOf(t)).toHaveLength(1);

    t.llm.enqueue({ toolCalls: [{ name: "mission_list", arguments: {} }] }, { text: "listed" });
    await chat(t, "what missions do I have?");
    expect(toolOutputs(t).at(-1)).toContain(`- ${mine.id}: "Plants", At 07:00, Monday through Friday (Europe/Berlin) [0 7 * * 1-5], next run`);
    t.llm.enqueue({ toolCalls: [{ name: "mission_cancel", arguments: { id: mine.id } }] }, { text: "cancelled" });
    await chat(t, "cancel the plants one");
    expect(toolOutputs(t).at(-1)).toContain(`Cancelled mission ${mine.id} "Plants".`);
    expect(await routinesOf(t)).toEqual([]);
  });

  test("a bad schedule is told to the model in words it can act on", async () => {
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: "mission_create", arguments: { schedule: "every weekday", prompt: "x" } }] });
    const r = await chat(t, "remind me");
    await t.api(`/api/chat/approvals/${r.thread_id}`, { method: "POST", json: { decision: "approve" } });
    expect(toolOutputs(t).at(-1)).toContain("mission_create failed: schedule: \"every weekday\" is not understood");
  });

  test("caller tools may not be named mission_*", async () => {
    const r = await t.respond({ model: "m", input: "hi", tools: [{ type: "function", name: "mission_create", description: "x", parameters: { type: "object", properties: {} } }] });
    expect(r.status).toBe(400);
  });
});

test("an operator's tools.approval can let mission_create run without asking", async () => {
  const home = join(mkdtempSync(join(tmpdir(), "service-missions-")), "home");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ tools: { approval: { mission_create: "auto" } } }));
  const t = await startTestService({ keepHome: home });
  try {
    t.llm.enqueue({ toolCalls: [{ name: "mission_create", arguments: { schedule: "every 1d", prompt: "Daily check." } }] }, { text: "ok" });
    const r = await chat(t, "check daily");
    expect(r.response).toBe("ok");
    expect((await routinesOf(t)).map((x) => x.prompt)).toEqual(["Daily check."]);
  } finally {
    await t.stop();
    rmSync(join(home, ".."), { recursive: true, force: true });
  }
});
