import { InvalidRequest } from "../errors";

/** Longest document path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 512;

/**
 * Checks a memory document path and returns it unchanged: relative, `/`-separated, no
 * empty, `.` or `..` segments, no backslashes or control characters, at most 512 bytes.
 * Paths are case-sensitive and compared exactly as given.
 */
export function checkPath(path: unknown): string {
  if (typeof path !== "string") throw bad("must be a string");
  if (!path) throw bad("is empty");
  if (Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES) throw bad(`is longer than ${MAX_PATH_BYTES} bytes`);
  // C0 and C1 control characters, DEL, and lone surrogates (not valid UTF-8)
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) throw bad("contains a control character");
  if (!path.isWellFormed()) throw bad("is not valid Unicode text");
  if (path.includes("\\")) throw bad("contains a backslash; separate folders with /");
  if (path.startsWith("/") || /^[A-Za-z]:(\/|$)/.test(path)) throw bad("must be relative, like notes/garden.md");
  for (const segment of path.split("/")) {
    if (!segment) throw bad("has an empty segment (a leading, trailing or double /)");
    if (segment === "." || segment === "..") throw bad(`may not contain a "${segment}" segment`);
  }
  return path;
}

const bad = (what: string) => new InvalidRequest(`Invalid memory path: the path ${what}.`, "invalid_path");
