/** Instructions a caller sends with a message (or as a system or developer message), rendered ahead of it. */
export const instructionsBlock = (text: string) => `<instructions>\n${text}\n</instructions>`;

/**
 * Structured context a caller attaches to a message, rendered ahead of it: one line per key,
 * a flat object's fields indented below its key, anything deeper as JSON.
 *
 * Keys and values are the caller's: a key or string that could forge structure (a line break
 * or another control character, `<` or `>`, a leading space or quote, a colon in a key) is
 * written as a JSON string with `<` and `>` escaped, so every line of the block is one of ours.
 */
export function userContextBlock(context: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(context)) {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      lines.push(`${safeKey(key)}:`);
      for (const [k, v] of Object.entries(value)) lines.push(`  ${safeKey(k)}: ${safeValue(v)}`);
    } else {
      lines.push(`${safeKey(key)}: ${safeValue(value)}`);
    }
  }
  return `<user-context>\n${lines.join("\n")}\n</user-context>`;
}

const PLAIN_VALUE = /^[^\s"<>\p{Cc}\p{Zl}\p{Zp}](?:[^<>\p{Cc}\p{Zl}\p{Zp}]*[^\s<>\p{Cc}\p{Zl}\p{Zp}])?$/u;
const PLAIN_KEY = /^[\p{L}\p{N}_.-]+$/u;

/** JSON that cannot close or open a tag: `<` and `>` as \u escapes. */
const json = (v: unknown) => (JSON.stringify(v) ?? "null").replace(/[<>\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

const safeKey = (k: string) => (PLAIN_KEY.test(k) ? k : json(k));
const safeValue = (v: unknown) => (typeof v === "string" && PLAIN_VALUE.test(v) ? v : json(v));
