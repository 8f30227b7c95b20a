/**
 * Structured context a caller attaches to a message, rendered ahead of it: one line per key,
 * a flat object's fields indented below its key, anything deeper as raw JSON.
 */
export function userContextBlock(context: Record<string, unknown>): string {
  const lines: string[] = [];
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  for (const [key, value] of Object.entries(context)) {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      lines.push(`${key}:`);
      for (const [k, v] of Object.entries(value)) lines.push(`  ${k}: ${text(v)}`);
    } else {
      lines.push(`${key}: ${text(value)}`);
    }
  }
  return `<user-context>\n${lines.join("\n")}\n</user-context>`;
}
