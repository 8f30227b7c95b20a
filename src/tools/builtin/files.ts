// file_read, file_write, file_list, file_delete: each user's own folder, $SERVICE_HOME/files/<userId>/.
// Every path is resolved component by component: `..` that leaves the folder, absolute paths
// and symbolic links whose real target lies outside are refused. So is a file with more than
// one hard link: the other name may be anywhere on the disk (`config.json` in the home), and
// the check is made on the opened file (fstat), so the name cannot be swapped after it.
import { Type } from "@sinclair/typebox";
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rmdir, unlink } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { userFilesDir, type Paths } from "../../config/load";
import type { AgentFileRecords } from "../../store/agent-files";
import { defineTool, type Tool, type ToolContext } from "../tool";
import { formatBytes } from "./http-read";

export const FILE_READ_MAX_BYTES = 256 * 1024;
export const FILE_WRITE_MAX_BYTES = 1024 * 1024;
const LIST_MAX_ENTRIES = 1000;

const PathParam = Type.String({ minLength: 1, maxLength: 4096, description: "Path relative to your files folder, e.g. notes/todo.md" });

/** A path inside the user's folder, its parents resolved; `final` is set when it exists. */
interface Resolved {
  /** The path as the model should see it, relative to the user's folder ("." for the folder). */
  shown: string;
  /** The real directory holding the last component (null for the folder itself). */
  parent: string | null;
  /** `parent` + the last component as named (a symlink stays a symlink here). */
  path: string;
  /** Where the path really leads: `path`, or the in-folder target of a symlink. */
  real: string;
  /** lstat of `path` when it exists. */
  final?: Stats;
  /** Components under `parent` that do not exist yet (for writes). */
  missing: string[];
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + sep);

class FilesFolder {
  constructor(private readonly home: string) {}

  /** The user's folder (created 0700 on first use), as a real path. */
  async root(userId: string): Promise<string> {
    const dir = userFilesDir(this.home, userId);
    if (!dir) throw new Error("this user has no files folder");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return realpath(dir);
  }

  async resolve(ctx: ToolContext, input: string): Promise<Resolved> {
    if (input.includes("\0")) throw new Error("the path contains a NUL character");
    if (isAbsolute(input) || input === "~" || input.startsWith("~/")) {
      throw new Error(`${input} is an absolute path: paths are relative to your files folder`);
    }
    const root = await this.root(ctx.userId);
    const rel = relative(root, resolve(root, input));
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new Error(`${input} leads outside your files folder`);
    }
    const shown = rel || ".";
    const parts = rel ? rel.split(sep) : [];
    if (!parts.length) return { shown, parent: null, path: root, real: root, final: await lstat(root), missing: [] };

    // every existing parent must really be a directory inside the folder
    let dir = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = join(dir, parts[i]!);
      const st = await lstatOrNull(next);
      if (!st) return { shown, parent: dir, path: join(dir, ...parts.slice(i)), real: join(dir, ...parts.slice(i)), missing: parts.slice(i) };
      const real = st.isSymbolicLink() ? await linkTarget(root, next, shown) : next;
      if (!(await lstat(real)).isDirectory()) throw new Error(`${parts.slice(0, i + 1).join("/")} is not a folder`);
      dir = real;
    }
    const name = parts[parts.length - 1]!;
    const path = join(dir, name);
    const final = await lstatOrNull(path);
    const real = final?.isSymbolicLink() ? await linkTarget(root, path, shown) : path;
    return { shown, parent: dir, path, real, final: final ?? undefined, missing: final ? [] : [name] };
  }
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** The real target of a symlink, refused unless it exists inside the folder. */
async function linkTarget(root: string, link: string, shown: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(link);
  } catch {
    throw new Error(`${shown} goes through a symbolic link that leads nowhere (or outside your files folder)`);
  }
  if (!inside(root, real)) throw new Error(`${shown} goes through a symbolic link that leads outside your files folder`);
  return real;
}

/** A node error as words for the model, never with the host's absolute paths. */
function explain(e: unknown, shown: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: `${shown} does not exist`,
    EISDIR: `${shown} is a folder`,
    ENOTDIR: `a part of ${shown} is not a folder`,
    ENOTEMPTY: `the folder ${shown} is not empty: delete what is in it first`,
    EACCES: `permission denied for ${shown}`,
    EPERM: `permission denied for ${shown}`,
    ELOOP: `${shown} is a symbolic link`,
    ENOSPC: "the disk is full",
  };
  return code && words[code] ? new Error(words[code]) : (e as Error);
}

/** A file reached through another name too is not this folder's to read, change or delete. */
function refuseHardLinked(st: Stats, shown: string): void {
  if (st.isFile() && st.nlink > 1) {
    throw new Error(`${shown} has other hard links (names outside your files folder may lead to the same file): it is refused`);
  }
}

const looksBinary = (bytes: Uint8Array) => {
  if (bytes.subarray(0, 8192).includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
};

const sha256 = (data: Uint8Array | string) => Bun.CryptoHasher.hash("sha256", data, "hex");

/**
 * The file tools. With `records`, what the agent writes is remembered by its hash, and a file
 * it reads is trusted only when the agent wrote exactly that content in an untainted turn;
 * anything else in the folder was put there by someone else (or changed since) and is untrusted.
 */
export function fileTools(paths: Paths, records?: AgentFileRecords): Tool[] {
  const files = new FilesFolder(paths.home);
  /** Runs `fn`, turning file-system errors into plain words about `shown`. */
  const guarded = async <T>(ctx: ToolContext, input: string, fn: (r: Resolved) => Promise<T>): Promise<T> => {
    const r = await files.resolve(ctx, input);
    try {
      return await fn(r);
    } catch (e) {
      throw explain(e, r.shown);
    }
  };

  const fileRead = defineTool({
    name: "file_read",
    repeatable: true,
    description: `Read a UTF-8 text file from your files folder (at most ${formatBytes(FILE_READ_MAX_BYTES)}; binary files are refused).`,
    parameters: Type.Object({ path: PathParam }),
    execute: ({ path }, ctx) =>
      guarded(ctx, path, async (r) => {
        if (!r.final) throw new Error(`${r.shown} does not exist`);
        const handle = await open(r.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        try {
          const st = await handle.stat();
          if (st.isDirectory()) throw new Error(`${r.shown} is a folder: use file_list`);
          if (!st.isFile()) throw new Error(`${r.shown} is not a regular file`);
          refuseHardLinked(st, r.shown);
          if (st.size > FILE_READ_MAX_BYTES) {
            throw new Error(
              `${r.shown} is ${formatBytes(st.size)}, larger than the ${formatBytes(FILE_READ_MAX_BYTES)} file_read returns: ` +
                "split it into smaller files, or keep a shorter summary",
            );
          }
          const bytes = new Uint8Array(await handle.readFile());
          if (looksBinary(bytes)) throw new Error(`${r.shown} is a binary file (${formatBytes(bytes.byteLength)}): file_read only reads text`);
          const untrusted = !(await records?.trusted(ctx.userId, sha256(bytes)));
          return { output: new TextDecoder().decode(bytes), untrusted };
        } finally {
          await handle.close();
        }
      }),
  });

  const fileWrite = defineTool({
    name: "file_write",
    description: `Create or replace a text file in your files folder (at most ${formatBytes(FILE_WRITE_MAX_BYTES)}); missing folders are created.`,
    parameters: Type.Object({ path: PathParam, content: Type.String({ description: "The whole new content of the file" }) }),
    async execute({ path, content }, ctx) {
      const bytes = Buffer.byteLength(content, "utf8");
      if (bytes > FILE_WRITE_MAX_BYTES) {
        throw new Error(`the content is ${formatBytes(bytes)}, more than the ${formatBytes(FILE_WRITE_MAX_BYTES)} file_write accepts: write it as several smaller files`);
      }
      return guarded(ctx, path, async (r) => {
        if (!r.parent) throw new Error("a file needs a name inside your files folder");
        if (r.final && !r.final.isSymbolicLink() && !r.final.isFile()) throw new Error(`${r.shown} exists and is not a file`);
        if (r.missing.length > 1) await mkdir(join(r.parent, ...r.missing.slice(0, -1)), { recursive: true, mode: 0o700 });
        // O_NOFOLLOW: a symlink slipped in after the checks is refused, not followed; no O_TRUNC:
        // the opened file is checked before anything in it changes
        const handle = await open(r.real, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
        try {
          const st = await handle.stat();
          if (!st.isFile()) throw new Error(`${r.shown} exists and is not a file`);
          refuseHardLinked(st, r.shown);
          await handle.truncate(0);
          await handle.writeFile(content, "utf8");
        } finally {
          await handle.close();
        }
        await records?.wrote(ctx.userId, r.shown, sha256(content), ctx.tainted === true);
        return `Wrote ${formatBytes(bytes)} to ${r.shown}.`;
      });
    },
  });

  const fileList = defineTool({
    name: "file_list",
    repeatable: true,
    description: "List a folder in your files folder (default: its top): each entry's name, type and size, sorted by name.",
    parameters: Type.Object({ path: Type.Optional(Type.String({ maxLength: 4096, description: "Folder to list; default the top" })) }),
    execute: ({ path }, ctx) =>
      guarded(ctx, path?.trim() || ".", async (r) => {
        if (!r.final) throw new Error(`${r.shown} does not exist`);
        if (!(await lstat(r.real)).isDirectory()) throw new Error(`${r.shown} is a file, not a folder: use file_read`);
        const names = (await readdir(r.real)).sort();
        const lines: string[] = [];
        for (const name of names.slice(0, LIST_MAX_ENTRIES)) {
          const st = await lstatOrNull(join(r.real, name));
          if (!st) continue;
          if (st.isDirectory()) lines.push(`${name}/ (folder)`);
          else if (st.isSymbolicLink()) lines.push(`${name} (symbolic link)`);
          else if (st.isFile() && st.nlink > 1) lines.push(`${name} (file with other hard links: refused)`);
          else if (st.isFile()) lines.push(`${name} (file, ${st.size} bytes)`);
          else lines.push(`${name} (other)`);
        }
        if (names.length > LIST_MAX_ENTRIES) lines.push(`[${names.length - LIST_MAX_ENTRIES} more entries not shown]`);
        return lines.length ? `${r.shown}:\n${lines.join("\n")}` : `${r.shown} is empty.`;
      }),
  });

  const fileDelete = defineTool({
    name: "file_delete",
    description: "Delete a file, or an empty folder, from your files folder.",
    parameters: Type.Object({ path: PathParam }),
    execute: ({ path }, ctx) =>
      guarded(ctx, path, async (r) => {
        if (!r.parent) throw new Error("your files folder itself cannot be deleted");
        if (!r.final) throw new Error(`${r.shown} does not exist`);
        refuseHardLinked(r.final, r.shown);
        // a symlink (already checked to stay inside) is removed itself, not its target
        if (r.final.isDirectory()) await rmdir(r.path);
        else {
          await unlink(r.path);
          await records?.forget(ctx.userId, r.shown);
        }
        return `Deleted ${r.shown}.`;
      }),
  });

  return [fileRead, fileWrite, fileList, fileDelete];
}
