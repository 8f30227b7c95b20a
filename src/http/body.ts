import { InvalidRequest, PayloadTooLarge } from "../errors";

export const MAX_BODY_BYTES = 14 * 1024 * 1024;

/** Refuses bytes that are not UTF-8; `decode` without `stream` keeps no state between calls. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The body's bytes, at most 14 MiB whether its length is declared or it comes chunked: the
 * listener itself lets larger bodies through so that they get the JSON envelope, not an empty 413.
 */
export async function readBodyBytes(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (Number(declared ?? 0) > limit) throw new PayloadTooLarge("14 MiB");
  // a declared length is what the listener reads, no more: the body is read whole at once,
  // without the stream that `request.body` would make of it
  if (declared !== null) {
    try {
      return await request.bytes();
    } catch {
      throw new InvalidRequest("The request body could not be read.");
    }
  }
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch {
      throw new InvalidRequest("The request body could not be read.");
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => {});
      throw new PayloadTooLarge("14 MiB");
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks);
}

/** Any JSON value; an Elysia route's `parse`, so that its TypeBox schema checks the result. */
export async function readJson(request: Request): Promise<unknown> {
  const bytes = await readBodyBytes(request);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InvalidRequest("The request body could not be read as UTF-8 text.");
  }
  if (!text.trim()) throw new InvalidRequest("The request body is empty; send a JSON object.");
  if (nestedTooDeep(text)) throw new InvalidRequest(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InvalidRequest(`The request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** How deep arrays and objects may nest in a JSON body; deeper is refused before it is parsed. */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, read off the brackets
 * outside strings: nothing deeper reaches a parser or a validator, whose recursion it could
 * overflow.
 */
export function nestedTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // on to the string's closing quote: one after an even run of backslashes
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return false;
        let k = i - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        if ((i - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
