// Shared by web_fetch and web_search: a response body read up to a byte limit, and decoded.

export interface LimitedBody {
  bytes: Uint8Array;
  /** True when the body went on past the limit and the rest was not read. */
  truncated: boolean;
}

/** Reads at most `maxBytes` of the body, then cancels the rest of the stream. */
export async function readLimited(res: Response, maxBytes: number): Promise<LimitedBody> {
  if (!res.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, truncated };
}

/** The media type and charset of a Content-Type header, lower-cased. */
export function parseContentType(header: string | null): { mime: string; charset?: string } {
  const [type = "", ...params] = (header ?? "").split(";");
  const charset = params
    .map((p) => p.trim().toLowerCase())
    .find((p) => p.startsWith("charset="))
    ?.slice(8)
    .replace(/^"|"$/g, "");
  return { mime: type.trim().toLowerCase(), charset: charset || undefined };
}

/** Text in the declared charset when this runtime knows it, else UTF-8 (bad bytes replaced). */
export function decodeText(bytes: Uint8Array, charset?: string): string {
  if (charset) {
    try {
      return new TextDecoder(charset as ConstructorParameters<typeof TextDecoder>[0]).decode(bytes);
    } catch {
      // an unknown label: fall back to UTF-8
    }
  }
  return new TextDecoder().decode(bytes);
}

export const formatBytes = (n: number) =>
  n >= 1024 * 1024 ? `${+(n / (1024 * 1024)).toFixed(1)} MiB` : n >= 1024 ? `${+(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
