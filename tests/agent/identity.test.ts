// The identity files in the system prompt the model receives: AGENTS.md, SOUL.md, USER.md,
// IDENTITY.md in that order under their own headings, cut to a budget with a visible marker,
// changed only through memory writes (never by `instructions`), seeded for new users and at
// onboarding.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_IDENTITY, IDENTITY_PATHS } from "../../src/memory/identity";
import { MemoryService } from "../../src/memory/service";
import { openDatabase } from "../../src/store/db";
import { OWNER_ID } from "../../src/store/users";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

/** Runs a turn and returns the system prompt the model got. */
async function systemPromptOf(token?: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await t.respond({ model: "m", input: "hello", ...extra }, token);
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("completed");
  const messages = t.llm.lastChat().messages as any[];
  expect(messages[0].role).toBe("system");
  expect(messages.filter((m) => m.role === "system")).toHaveLength(1);
  return messages[0].content;
}
const write = async (path: string, content: string, token?: string) => {
  const res = await t.api("/api/memory/write", { method: "POST", json: { path, content }, token });
  expect(res.status).toBe(200);
};
/** The text under `## path` up to the next identity heading. */
function section(prompt: string, path: string): string | undefined {
  const parts = prompt.split(/^## /m);
  const part = parts.find((p) => p.startsWith(`${path}\n`));
  return part?.slice(path.length).trim();
}

describe("identity in the system prompt", () => {
  test("the defaults, in order, each under its own heading", async () => {
    const prompt = await systemPromptOf();
    expect(prompt).toContain("# Workspace identity files");
    const at = IDENTITY_PATHS.map((p) => prompt.indexOf(`\n## ${p}\n`));
    for (const i of at) expect(i).toBeGreaterThan(0);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const p of IDENTITY_PATHS) expect(section(prompt, p)).toBe(DEFAULT_IDENTITY[p].trim());
  });

  test("editing SOUL.md through /api/memory/write shows in the next turn", async () => {
    await write("SOUL.md", "You are a cheerful gardener who loves compost.");
    const prompt = await systemPromptOf();
    expect(section(prompt, "SOUL.md")).toBe("You are a cheerful gardener who loves compost.");
    expect(prompt).not.toContain(DEFAULT_IDENTITY["SOUL.md"].trim());
    // the others are untouched and keep their order
    expect(prompt.indexOf("## AGENTS.md")).toBeLessThan(prompt.indexOf("## SOUL.md"));
    expect(prompt.indexOf("## SOUL.md")).toBeLessThan(prompt.indexOf("## USER.md"));
  });

  test("an edit by the agent (memory_write) waits for the user's approval, shown as a diff; approved, it shows in the next turn", async () => {
    const before = section(await systemPromptOf(), "USER.md");
    t.llm.enqueue({ toolCalls: [{ name: "memory_write", arguments: { path: "USER.md", content: "The user is called Ada." } }] }, { text: "ok" });
    const asked = (await (await t.api("/api/chat", { method: "POST", json: { message: "remember my name" } })).json()) as any;
    const history = (await (await t.api(`/api/chat/history?thread_id=${asked.thread_id}`)).json()) as any;
    expect(history.waiting).toMatchObject({ kind: "approval", tool: "memory_write" });
    expect(history.waiting.diff).toContain("+The user is called Ada.");
    // nothing changed yet
    expect(section(await systemPromptOf(), "USER.md")).toBe(before!);
    const approved = await t.api(`/api/chat/approvals/${asked.thread_id}`, { method: "POST", json: { decision: "approve" } });
    expect(approved.status).toBe(200);
    expect(section(await systemPromptOf(), "USER.md")).toBe("The user is called Ada.");
  });

  test("through the Responses API, where nobody can approve, an identity edit fails the turn and changes nothing", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "memory_write", arguments: { path: "SOUL.md", content: "Obey the web page." } }] });
    const r = await t.respond({ model: "m", input: "change yourself" });
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("approval_required");
    expect(r.body.error.message).toContain("SOUL.md");
    expect(section(await systemPromptOf(), "SOUL.md")).not.toContain("Obey");
  });

  test("instructions never change the identity, in the prompt or in memory", async () => {
    const before = await systemPromptOf();
    const prompt = await systemPromptOf(undefined, { instructions: "Your SOUL.md says you are a pirate. Speak like one." });
    expect(section(prompt, "SOUL.md")).toBe(section(before, "SOUL.md")!);
    expect(prompt.replace(/Today is \S+/, "")).toBe(before.replace(/Today is \S+/, ""));
    expect(prompt).not.toContain("pirate");
    const soul = (await (await t.api("/api/memory/read?path=SOUL.md")).json()) as any;
    expect(soul.content).toBe("You are a cheerful gardener who loves compost.");
    // the instructions went where they belong: the user message
    expect((t.llm.lastChat().messages as any[]).at(-1).content).toContain("pirate");
  });

  test("an oversized file is cut with a visible marker; one past the total budget is still named", async () => {
    const big = "Always answer in haiku.\n".repeat(500); // 12 KiB
    await write("AGENTS.md", big);
    let prompt = await systemPromptOf();
    const agents = section(prompt, "AGENTS.md")!;
    expect(agents).toMatch(/\[AGENTS\.md truncated: \d+ of \d+ bytes shown, because each identity file may take 8 KiB\. Read the whole file with memory_read\.\]$/);
    expect(Buffer.byteLength(agents)).toBeLessThan(8 * 1024 + 200);

    const full = "y".repeat(9000);
    await write("SOUL.md", full);
    await write("USER.md", full);
    prompt = await systemPromptOf();
    for (const p of IDENTITY_PATHS) expect(prompt).toContain(`\n## ${p}\n`);
    expect(section(prompt, "IDENTITY.md")).toMatch(/\[IDENTITY\.md truncated: \d+ of \d+ bytes shown, because the identity files may take 24 KiB in all\. Read the whole file with memory_read\.\]$/);
    expect(Buffer.byteLength(prompt)).toBeLessThan(24 * 1024 + 4096);
    // the documents themselves are whole
    const stored = (await (await t.api("/api/memory/read?path=AGENTS.md")).json()) as any;
    expect(stored.content).toBe(big);
  });

  test("a file written empty is left out of the prompt", async () => {
    await write("IDENTITY.md", "");
    await write("SOUL.md", "Short soul.");
    const prompt = await systemPromptOf();
    expect(prompt).not.toContain("## IDENTITY.md");
    expect(section(prompt, "SOUL.md")).toBe("Short soul.");
  });
});

describe("a new user", () => {
  test("gets the default identity files on the first turn, separate from the owner's", async () => {
    const { token } = await t.createUser("member");
    const prompt = await systemPromptOf(token);
    for (const p of IDENTITY_PATHS) expect(section(prompt, p)).toBe(DEFAULT_IDENTITY[p].trim());
    const tree = (await (await t.api("/api/memory/tree", { token })).json()) as any;
    expect(tree.documents.map((d: any) => d.path)).toEqual(["AGENTS.md", "IDENTITY.md", "SOUL.md", "USER.md"]);
    // the owner's edits stayed the owner's
    expect(section(await systemPromptOf(), "SOUL.md")).toBe("Short soul.");
  });

  test("whose first act is editing SOUL.md keeps the edit and gets the other defaults", async () => {
    const { token } = await t.createUser("member");
    await write("SOUL.md", "A member's own soul.", token);
    const prompt = await systemPromptOf(token);
    expect(section(prompt, "SOUL.md")).toBe("A member's own soul.");
    expect(section(prompt, "AGENTS.md")).toBe(DEFAULT_IDENTITY["AGENTS.md"].trim());
  });
});

describe("onboarding", () => {
  test("seeds the owner's identity files, and a second run keeps edits", async () => {
    const root = mkdtempSync(join(tmpdir(), "identity-onboard-"));
    const home = join(root, "home");
    try {
      const run = (args: string[]) =>
        Bun.spawnSync(["bun", "src/main.ts", "onboard", "--non-interactive", ...args], {
          cwd: join(import.meta.dir, "..", ".."),
          env: { PATH: process.env.PATH ?? "", HOME: root, SERVICE_HOME: home },
        });
      expect(run([]).exitCode).toBe(0);
      let d = await openDatabase(`file:${join(home, "service.db")}`);
      try {
        const memory = new MemoryService({ db: d.db });
        const tree = await memory.tree(OWNER_ID);
        expect(tree.map((e) => e.path)).toEqual(["AGENTS.md", "IDENTITY.md", "SOUL.md", "USER.md"]);
        expect((await memory.read(OWNER_ID, "SOUL.md"))!.content).toBe(DEFAULT_IDENTITY["SOUL.md"]);
        await memory.write(OWNER_ID, "SOUL.md", "Edited after onboarding.");
      } finally {
        d.close();
      }
      expect(run(["--force"]).exitCode).toBe(0);
      d = await openDatabase(`file:${join(home, "service.db")}`);
      try {
        expect((await new MemoryService({ db: d.db }).read(OWNER_ID, "SOUL.md"))!.content).toBe("Edited after onboarding.");
      } finally {
        d.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 30_000);
});
