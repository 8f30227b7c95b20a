// Tool name patterns, as `tools.approval` and an MCP server's `tools` / `excludeTools` take
// them: `*` stands for any run of characters (none included); every other character is itself.

const compiled = new Map<string, RegExp>();

export const isGlob = (pattern: string) => pattern.includes("*");

function regexOf(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    compiled.set(pattern, (re = new RegExp(`^${body}$`, "s")));
  }
  return re;
}

export function matchesPattern(pattern: string, name: string): boolean {
  return isGlob(pattern) ? regexOf(pattern).test(name) : pattern === name;
}

export const matchesAny = (patterns: readonly string[], name: string) => patterns.some((p) => matchesPattern(p, name));

/**
 * A lookup over `rules` (pattern → value) by the most specific pattern that matches a name:
 * the exact name, then the longest glob; between globs of one length, `tie` picks.
 */
export function mostSpecific<V>(rules: Record<string, V>, tie: (a: V, b: V) => V): (name: string) => V | undefined {
  const globs = Object.keys(rules)
    .filter(isGlob)
    .sort((a, b) => b.length - a.length);
  return (name) => {
    if (Object.hasOwn(rules, name)) return rules[name];
    let found: { length: number; value: V } | undefined;
    for (const glob of globs) {
      if (found && glob.length < found.length) break;
      if (!matchesPattern(glob, name)) continue;
      found = found ? { length: found.length, value: tie(found.value, rules[glob]!) } : { length: glob.length, value: rules[glob]! };
    }
    return found?.value;
  };
}

/** The patterns that match none of the names, in their order. */
export function unmatchedPatterns(patterns: readonly string[], names: readonly string[]): string[] {
  return patterns.filter((p) => !names.some((n) => matchesPattern(p, n)));
}

/**
 * Whether the pattern could match some name that starts with `prefix` (an MCP server's
 * `mcp__<server>__`): its text before the first `*` and the prefix agree as far as both go.
 */
export function couldMatchPrefix(pattern: string, prefix: string): boolean {
  if (!isGlob(pattern)) return pattern.startsWith(prefix);
  const literal = pattern.slice(0, pattern.indexOf("*"));
  return literal.startsWith(prefix) || prefix.startsWith(literal);
}
