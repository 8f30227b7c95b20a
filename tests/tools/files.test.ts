// file_read, file_write, file_list and file_delete through the agent loop: the scripted model
// calls a tool, and the test reads the tool result the model got back, and the disk.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
let ownerDir: string;

beforeAll(async () => {
  t = await startTestService();
  ownerDir = join(t.home, "files", "owner");
});
afterAll(() => t.stop());

/** Has the model call one tool; returns the tool result text it was given. */
async function call(name: string, args: unknown, token?: string): Promise<string> {
  t.llm.enqueue({ toolCalls: [{ name, arguments: args }] }, { text: "done" });
  const r = await t.respond({ model: "m", input: `please run ${name}` }, token);
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("completed");
  const toolMessages = t.llm.lastChat().messages.filter((m: any) => m.role === "tool");
  expect(toolMessages).toHaveLength(1);
  return toolMessages[0].content as string;
}

describe("the four tools", () => {
  test("are registered", () => {
    for (const name of ["file_read", "file_write", "file_list", "file_delete"]) {
      expect(t.service.services.tools.get(name)).toBeDefined();
    }
  });

  test("file_write creates the folder 0700, the file and its parents", async () => {
    const out = await call("file_write", { path: "notes/todo.md", content: "- buy milk\n- ünïcode ✓\n" });
    expect(out).toContain("Wrote");
    expect(out).toContain("notes/todo.md");
    expect(readFileSync(join(ownerDir, "notes", "todo.md"), "utf8")).toBe("- buy milk\n- ünïcode ✓\n");
    expect(statSync(ownerDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(ownerDir, "notes")).mode & 0o777).toBe(0o700);
    expect(statSync(join(ownerDir, "notes", "todo.md")).mode & 0o777).toBe(0o600);
  });

  test("file_write replaces an existing file", async () => {
    await call("file_write", { path: "replace.txt", content: "first version, longer" });
    await call("file_write", { path: "replace.txt", content: "second" });
    expect(readFileSync(join(ownerDir, "replace.txt"), "utf8")).toBe("second");
  });

  test("file_read returns the text", async () => {
    writeFileSync(join(ownerDir, "hello.txt"), "Hello from disk\nline two");
    const out = await call("file_read", { path: "hello.txt" });
    expect(out).toContain("Hello from disk\nline two");
    expect(out).not.toContain("Error");
  });

  test("file_read of a missing file says so, without host paths", async () => {
    const out = await call("file_read", { path: "nope.txt" });
    expect(out).toContain("Error");
    expect(out).toContain("nope.txt does not exist");
    expect(out).not.toContain(t.home);
  });

  test("file_list gives names, types and sizes, sorted", async () => {
    mkdirSync(join(ownerDir, "listing", "sub"), { recursive: true });
    writeFileSync(join(ownerDir, "listing", "b.txt"), "12345");
    writeFileSync(join(ownerDir, "listing", "a.txt"), "");
    writeFileSync(join(ownerDir, "listing", "C.md"), "x");
    const out = await call("file_list", { path: "listing" });
    const lines = out.split("\n").filter((l) => / \(/.test(l));
    expect(lines).toEqual(["C.md (file, 1 bytes)", "a.txt (file, 0 bytes)", "b.txt (file, 5 bytes)", "sub/ (folder)"]);
  });

  test("file_list without a path lists the top of the folder", async () => {
    const out = await call("file_list", {});
    expect(out).toContain("notes/ (folder)");
    expect(out).toContain("hello.txt (file, 24 bytes)");
  });

  test("file_delete removes a file, and an empty folder but not a full one", async () => {
    writeFileSync(join(ownerDir, "gone.txt"), "bye");
    expect(await call("file_delete", { path: "gone.txt" })).toContain("Deleted gone.txt");
    expect(existsSync(join(ownerDir, "gone.txt"))).toBe(false);

    mkdirSync(join(ownerDir, "full"), { recursive: true });
    writeFileSync(join(ownerDir, "full", "f"), "x");
    expect(await call("file_delete", { path: "full" })).toContain("not empty");
    expect(existsSync(join(ownerDir, "full", "f"))).toBe(true);

    mkdirSync(join(ownerDir, "empty"), { recursive: true });
    expect(await call("file_delete", { path: "empty" })).toContain("Deleted empty");
    expect(existsSync(join(ownerDir, "empty"))).toBe(false);
  });

  test("file_delete of the folder itself is refused", async () => {
    const out = await call("file_delete", { path: "." });
    expect(out).toContain("cannot be deleted");
    expect(existsSync(ownerDir)).toBe(true);
  });

  test("a missing argument is a readable tool error", async () => {
    const out = await call("file_write", { path: "x.txt" });
    expect(out).toContain("invalid arguments for file_write");
  });
});

describe("limits", () => {
  test("a write over 1 MiB is refused and nothing is written", async () => {
    const out = await call("file_write", { path: "big.txt", content: "a".repeat(1024 * 1024 + 1) });
    expect(out).toContain("Error");
    expect(out).toContain("1 MiB");
    expect(existsSync(join(ownerDir, "big.txt"))).toBe(false);
  });

  test("exactly 1 MiB is accepted", async () => {
    const out = await call("file_write", { path: "edge.txt", content: "b".repeat(1024 * 1024) });
    expect(out).toContain("Wrote 1 MiB");
    expect(statSync(join(ownerDir, "edge.txt")).size).toBe(1024 * 1024);
  });

  test("a read over 256 KiB is refused with a suggestion", async () => {
    writeFileSync(join(ownerDir, "large.log"), "x".repeat(256 * 1024 + 1));
    const out = await call("file_read", { path: "large.log" });
    expect(out).toContain("Error");
    expect(out).toContain("256 KiB");
    expect(out).toContain("smaller files");
  });

  test("a binary file is refused", async () => {
    writeFileSync(join(ownerDir, "image.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
    const out = await call("file_read", { path: "image.png" });
    expect(out).toContain("binary file");
    writeFileSync(join(ownerDir, "latin1.txt"), new Uint8Array([0x63, 0x61, 0x66, 0xe9])); // not UTF-8
    expect(await call("file_read", { path: "latin1.txt" })).toContain("binary file");
  });
});

describe("paths that leave the folder", () => {
  test.each([["../x"], ["a/../../x"], ["../../../../etc/passwd"], ["notes/../../owner-twin/x"]])("%s is refused", async (path) => {
    for (const [tool, args] of [
      ["file_read", { path }],
      ["file_write", { path, content: "escape" }],
      ["file_delete", { path }],
      ["file_list", { path }],
    ] as const) {
      const out = await call(tool, args);
      expect(out).toContain("leads outside your files folder");
    }
    expect(existsSync(join(t.home, "files", "x"))).toBe(false);
    expect(existsSync(join(t.home, "x"))).toBe(false);
  });

  test("`..` that stays inside is fine", async () => {
    const out = await call("file_write", { path: "notes/../inside.txt", content: "ok" });
    expect(out).toContain("Wrote");
    expect(readFileSync(join(ownerDir, "inside.txt"), "utf8")).toBe("ok");
  });

  test.each([["/etc/passwd"], ["/tmp/x"], ["~/x"]])("absolute path %s is refused", async (path) => {
    expect(await call("file_read", { path })).toContain("absolute path");
    expect(await call("file_write", { path, content: "x" })).toContain("absolute path");
  });

  test("a symlink to /etc is not followed: read, list, write, delete", async () => {
    symlinkSync("/etc", join(ownerDir, "etc-link"));
    expect(await call("file_read", { path: "etc-link/hostname" })).toContain("symbolic link that leads outside");
    expect(await call("file_list", { path: "etc-link" })).toContain("symbolic link that leads outside");
    expect(await call("file_write", { path: "etc-link/evil", content: "x" })).toContain("symbolic link that leads outside");
    expect(await call("file_delete", { path: "etc-link" })).toContain("symbolic link that leads outside");
    expect(existsSync(join(ownerDir, "etc-link"))).toBe(true);
  });

  test("a symlinked file pointing outside is refused on read, write and delete", async () => {
    const outside = join(t.home, "outside-secret.txt");
    writeFileSync(outside, "secret outside");
    symlinkSync(outside, join(ownerDir, "secret-link"));
    const read = await call("file_read", { path: "secret-link" });
    expect(read).toContain("leads outside");
    expect(read).not.toContain("secret outside");
    expect(await call("file_write", { path: "secret-link", content: "overwritten" })).toContain("leads outside");
    expect(readFileSync(outside, "utf8")).toBe("secret outside");
    expect(await call("file_delete", { path: "secret-link" })).toContain("leads outside");
    expect(existsSync(outside)).toBe(true);
  });

  test("a dangling symlink is refused on write (it could create a file anywhere)", async () => {
    const target = join(t.home, "created-through-link.txt");
    symlinkSync(target, join(ownerDir, "dangling"));
    expect(await call("file_write", { path: "dangling", content: "x" })).toContain("symbolic link");
    expect(existsSync(target)).toBe(false);
  });

  test("a symlink that stays inside the folder works", async () => {
    writeFileSync(join(ownerDir, "real.txt"), "real content");
    symlinkSync(join(ownerDir, "real.txt"), join(ownerDir, "alias.txt"));
    expect(await call("file_read", { path: "alias.txt" })).toContain("real content");
    expect(await call("file_list", {})).toContain("alias.txt (symbolic link)");
    // deleting the link removes the link, not its target
    expect(await call("file_delete", { path: "alias.txt" })).toContain("Deleted");
    expect(existsSync(join(ownerDir, "alias.txt"))).toBe(false);
    expect(readFileSync(join(ownerDir, "real.txt"), "utf8")).toBe("real content");
  });
});

describe("hard links", () => {
  /** config.json in the service home, with a secret in it, and a hard link to it in the owner's folder. */
  function linkedConfig(linkName: string): { config: string; content: string } {
    const config = join(t.home, "config.json");
    if (!existsSync(config)) writeFileSync(config, `${JSON.stringify({ llm: { apiKey: "sk-config-secret-0123456789" } })}\n`);
    mkdirSync(ownerDir, { recursive: true });
    linkSync(config, join(ownerDir, linkName));
    return { config, content: readFileSync(config, "utf8") };
  }

  test("a hard link to config.json is refused by file_read, file_write and file_delete, and file_list does not show its size", async () => {
    const { config, content } = linkedConfig("cfg.json");
    const read = await call("file_read", { path: "cfg.json" });
    expect(read).toContain("cfg.json has other hard links");
    expect(read).not.toContain("apiKey");
    const write = await call("file_write", { path: "cfg.json", content: '{"llm":{"baseUrl":"https://attacker.example"}}' });
    expect(write).toContain("cfg.json has other hard links");
    expect(readFileSync(config, "utf8")).toBe(content);
    expect(await call("file_delete", { path: "cfg.json" })).toContain("cfg.json has other hard links");
    expect(existsSync(join(ownerDir, "cfg.json"))).toBe(true);
    const list = await call("file_list", {});
    expect(list).toContain("cfg.json (file with other hard links: refused)");
    expect(list).not.toContain(`cfg.json (file, ${statSync(config).size} bytes)`);
  });

  test("a hard link in a subfolder and a symlink inside the folder to a hard link are refused too", async () => {
    const { config, content } = linkedConfig("deep-cfg.json");
    mkdirSync(join(ownerDir, "sub"), { recursive: true });
    linkSync(join(ownerDir, "deep-cfg.json"), join(ownerDir, "sub", "again.json"));
    symlinkSync(join(ownerDir, "deep-cfg.json"), join(ownerDir, "cfg-alias.json"));
    expect(await call("file_read", { path: "sub/again.json" })).toContain("has other hard links");
    expect(await call("file_read", { path: "cfg-alias.json" })).toContain("has other hard links");
    expect(await call("file_write", { path: "cfg-alias.json", content: "x" })).toContain("has other hard links");
    expect(readFileSync(config, "utf8")).toBe(content);
  });

  test("a symlink to config.json is refused (it leads outside)", async () => {
    const { config, content } = linkedConfig("unused-link.json");
    symlinkSync(config, join(ownerDir, "cfg-symlink.json"));
    const read = await call("file_read", { path: "cfg-symlink.json" });
    expect(read).toContain("leads outside");
    expect(read).not.toContain("apiKey");
    expect(await call("file_write", { path: "cfg-symlink.json", content: "x" })).toContain("leads outside");
    expect(readFileSync(config, "utf8")).toBe(content);
  });

  test("a file whose only name is in the folder is read and written as usual", async () => {
    writeFileSync(join(ownerDir, "single.txt"), "one name");
    expect(statSync(join(ownerDir, "single.txt")).nlink).toBe(1);
    expect(await call("file_read", { path: "single.txt" })).toContain("one name");
    expect(await call("file_write", { path: "single.txt", content: "still one" })).toContain("Wrote");
    expect(readFileSync(join(ownerDir, "single.txt"), "utf8")).toBe("still one");
  });
});

describe("users", () => {
  let member: { token: string; user: any };
  let memberDir: string;

  beforeAll(async () => {
    member = await t.createUser("member");
    memberDir = join(t.home, "files", member.user.user_id);
  });

  test("each user writes to and lists only their own folder", async () => {
    expect(await call("file_write", { path: "mine.txt", content: "member's words" }, member.token)).toContain("Wrote");
    expect(readFileSync(join(memberDir, "mine.txt"), "utf8")).toBe("member's words");
    expect(existsSync(join(ownerDir, "mine.txt"))).toBe(false);

    const listing = await call("file_list", {}, member.token);
    expect(listing).toContain("mine.txt");
    expect(listing).not.toContain("hello.txt");
    expect(await call("file_list", {})).not.toContain("mine.txt");
  });

  test("the owner cannot reach the member's file, nor the member the owner's", async () => {
    const id = member.user.user_id;
    expect(await call("file_read", { path: "mine.txt" })).toContain("does not exist");
    expect(await call("file_read", { path: `../${id}/mine.txt` })).toContain("leads outside");
    expect(await call("file_read", { path: "../owner/hello.txt" }, member.token)).toContain("leads outside");
    expect(await call("file_read", { path: "hello.txt" }, member.token)).toContain("does not exist");
  });

  test("a symlink into another user's folder is refused", async () => {
    symlinkSync(memberDir, join(ownerDir, "member-link"));
    const out = await call("file_read", { path: "member-link/mine.txt" });
    expect(out).toContain("leads outside");
    expect(out).not.toContain("member's words");
    expect(await call("file_delete", { path: "member-link/mine.txt" })).toContain("leads outside");
    expect(existsSync(join(memberDir, "mine.txt"))).toBe(true);
  });
});
