// Path rules of memory documents: relative, `/`-separated, no empty, `.` or `..` segments,
// at most 512 bytes, no control characters. A bad path is a 400-type error and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidRequest } from "../../src/errors";
import { checkPath, MAX_PATH_BYTES } from "../../src/memory/paths";
import { BAD_PATHS } from "./fixtures";
import { MemoryService } from "../../src/memory/service";
import { openLibsql, type LibsqlDatabase } from "../../src/store/libsql";

const GOOD_PATHS = [
  "notes/garden.md",
  "AGENTS.md",
  "a",
  "deep/er/and/deeper/still.txt",
  "with spaces/and (parens) & more.md",
  "ünïcødé/文件/🍅.md",
  ".hidden/file",
  "notes/.draft.md",
  "notes/...",
  "x..y/z..",
  "a".repeat(MAX_PATH_BYTES),
  "é".repeat(MAX_PATH_BYTES / 2),
];

describe("checkPath", () => {
  test.each(BAD_PATHS)("refuses %s", (_name, path) => {
    expect(() => checkPath(path)).toThrow(InvalidRequest);
    try {
      checkPath(path);
    } catch (e) {
      expect((e as InvalidRequest).status).toBe(400);
      expect((e as Error).message).toMatch(/^Invalid memory path: /);
    }
  });

  test.each(GOOD_PATHS)("accepts %p", (path) => {
    expect(checkPath(path)).toBe(path);
  });
});

describe("a bad path changes nothing", () => {
  let root: string;
  let d: LibsqlDatabase;
  let memory: MemoryService;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "memory-paths-"));
    d = await openLibsql(`file:${join(root, "m.db")}`);
    memory = new MemoryService({ db: d.db });
    await memory.write("u", "notes/garden.md", "Tomatoes.");
  });
  afterAll(() => {
    d.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("write, read and delete refuse every bad path; the store is untouched", async () => {
    const before = await d.client.execute("SELECT user_id, path, content, updated_at FROM memory_documents ORDER BY id");
    const chunks = (await d.client.execute("SELECT count(*) FROM memory_chunks")).rows[0]![0];
    for (const [, path] of BAD_PATHS) {
      await expect(memory.write("u", path as string, "x")).rejects.toBeInstanceOf(InvalidRequest);
      await expect(memory.read("u", path as string)).rejects.toBeInstanceOf(InvalidRequest);
      await expect(memory.delete("u", path as string)).rejects.toBeInstanceOf(InvalidRequest);
    }
    const after = await d.client.execute("SELECT user_id, path, content, updated_at FROM memory_documents ORDER BY id");
    expect(after.rows.map((r) => ({ ...r }))).toEqual(before.rows.map((r) => ({ ...r })));
    expect((await d.client.execute("SELECT count(*) FROM memory_chunks")).rows[0]![0]).toBe(chunks);
  });

  test("every good path round-trips exactly", async () => {
    for (const path of GOOD_PATHS) {
      await memory.write("u", path, `content of ${path}`);
      expect((await memory.read("u", path))!.content).toBe(`content of ${path}`);
    }
    const listed = (await memory.tree("u")).map((e) => e.path);
    for (const path of GOOD_PATHS) expect(listed).toContain(path);
  });

  test("content must be a string of at most 1 MiB", async () => {
    await expect(memory.write("u", "big.md", "x".repeat(1024 * 1024 + 1))).rejects.toBeInstanceOf(InvalidRequest);
    await expect(memory.write("u", "big.md", "é".repeat(512 * 1024) + "x")).rejects.toBeInstanceOf(InvalidRequest);
    await expect(memory.write("u", "big.md", 5 as unknown as string)).rejects.toBeInstanceOf(InvalidRequest);
    expect(await memory.read("u", "big.md")).toBeUndefined();
    const saved = await memory.write("u", "big.md", "x".repeat(1024 * 1024));
    expect(saved.size).toBe(1024 * 1024);
  });
});
