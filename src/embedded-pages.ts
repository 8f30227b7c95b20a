import { closeSync, openSync, readFileSync, readSync, realpathSync } from "node:fs";
import { libc } from "./libc";

/**
 * The compiled binary carries its code, bytecode and files (libSQL's native addon among them)
 * in an ELF section, `.bun`, mapped from the executable. Pages of it that were read stay
 * resident though nothing reads them again: the 9 MB addon, which Bun copies to a temporary
 * file at start and loads from there, and bytecode JavaScriptCore has decoded already. This
 * hands those pages back (`madvise(MADV_DONTNEED)`): a page read again later comes back from
 * the page cache as it was. Only pages still as the file has them are handed back, never one
 * that was written to (none is: Bun only reads the section). Linux, compiled binary only;
 * anywhere else, or when something does not look as expected, it does nothing.
 */
export function releaseEmbeddedPages(): void {
  section ??= embeddedSection() ?? null;
  if (!section) return;
  try {
    madvise ??= libcMadvise();
    const pages = readPagemap(section.start, section.end);
    const PAGE = 4096;
    for (let i = 0; i < pages.length; ) {
      if (!cleanFilePage(pages[i]!)) {
        i++;
        continue;
      }
      let j = i;
      while (j < pages.length && cleanFilePage(pages[j]!)) j++;
      madvise(section.start + i * PAGE, (j - i) * PAGE, MADV_DONTNEED);
      i = j;
    }
  } catch {
    section = null; // no FFI or no pagemap here: leave the pages as they are from now on
  }
}

const MADV_DONTNEED = 4;
let section: { start: number; end: number } | null | undefined;
let madvise: ((addr: number, length: number, advice: number) => number) | undefined;

/** Present, and a page of the file rather than a private copy (pagemap bits 63 and 61). */
const cleanFilePage = (entry: bigint) => ((entry >> 63n) & 1n) === 1n && ((entry >> 61n) & 1n) === 1n;

/** The whole pages of the `.bun` section in this process's memory, from the executable's section headers and /proc/self/maps. */
function embeddedSection(): { start: number; end: number } | undefined {
  if (process.platform !== "linux" || !process.argv[1]?.startsWith("/$bunfs/")) return undefined;
  try {
    const exe = realpathSync(process.execPath);
    const found = bunSection(exe);
    const mapping = found && mappingOf(readFileSync("/proc/self/maps", "utf8"), exe, found.offset);
    if (!found || !mapping || found.offset + found.size > mapping.offset + (mapping.end - mapping.start)) return undefined;
    const address = mapping.start + (found.offset - mapping.offset);
    return { start: Math.ceil(address / 4096) * 4096, end: Math.floor((address + found.size) / 4096) * 4096 };
  } catch {
    return undefined; // not readable here: nothing to do
  }
}

/** Where the `.bun` section is in an executable (ELF, 64-bit, little-endian), by its section headers. */
export function bunSection(exe: string): { offset: number; size: number } | undefined {
  const fd = openSync(exe, "r");
  try {
    const read = (length: number, position: number) => {
      const b = Buffer.alloc(length);
      readSync(fd, b, 0, length, position);
      return b;
    };
    const header = read(64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header[5] !== 1) return undefined;
    const [size, count, names] = [header.readUInt16LE(0x3a), header.readUInt16LE(0x3c), header.readUInt16LE(0x3e)];
    const table = read(size * count, Number(header.readBigUInt64LE(0x28)));
    const field = (i: number, at: number) => Number(table.readBigUInt64LE(i * size + at));
    const strings = read(field(names, 0x20), field(names, 0x18));
    for (let i = 0; i < count; i++) {
      const at = table.readUInt32LE(i * size);
      if (strings.toString("latin1", at, strings.indexOf(0, at)) === ".bun") return { offset: field(i, 0x18), size: field(i, 0x20) };
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The mapping of `file` at `offset` in a /proc/<pid>/maps text. */
export function mappingOf(maps: string, file: string, offset: number): { start: number; end: number; offset: number } | undefined {
  for (const line of maps.split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ ([0-9a-f]+) \S+ \d+\s+(.*)$/.exec(line);
    if (!m || m[4] !== file) continue;
    const mapping = { start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), offset: parseInt(m[3]!, 16) };
    if (offset >= mapping.offset && offset < mapping.offset + (mapping.end - mapping.start)) return mapping;
  }
  return undefined;
}

function readPagemap(start: number, end: number): BigUint64Array {
  const count = (end - start) / 4096;
  const entries = new BigUint64Array(count);
  const fd = openSync("/proc/self/pagemap", "r");
  try {
    readSync(fd, new Uint8Array(entries.buffer), 0, count * 8, (start / 4096) * 8);
  } finally {
    closeSync(fd);
  }
  return entries;
}

function libcMadvise() {
  const { madvise } = libc({ madvise: { args: ["u64", "u64", "i32"], returns: "i32" } });
  return (addr: number, length: number, advice: number) => madvise(addr, length, advice);
}
