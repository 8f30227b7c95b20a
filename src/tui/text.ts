// Text for blessed widgets, which have tags on.

/** Text for blessed with tags on: braces in user content must not be read as tags. */
export const escapeTags = (s: string) => s.replace(/[{}]/g, (c) => (c === "{" ? "{open}" : "{close}"));

/** One line, at most `max` characters, for tool arguments and results. */
export function brief(s: string, max = 120): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A tool result without the <tool_output> envelope the model sees it in. */
export function toolResult(output: string): string {
  const m = /^\s*<tool_output\b[^>]*>([\s\S]*?)<\/tool_output>\s*$/.exec(output);
  return m ? m[1]! : output;
}

/** JSON text pretty-printed when it is JSON; otherwise as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
