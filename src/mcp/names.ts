/** What model providers accept as a function name; MCP tool names must fit it too. */
export const MAX_NAME = 64;
const HASH_LENGTH = 6;

const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_") || "_";
const shortHash = (s: string) => Bun.CryptoHasher.hash("sha256", s, "hex").slice(0, HASH_LENGTH);

/**
 * The start every agent tool name of this server has, even shortened: the registry keeps it
 * from caller tools while the server is still starting.
 */
export function mcpServerPrefix(server: string): string {
  return `mcp__${sanitize(server)}__`.slice(0, MAX_NAME - HASH_LENGTH - 1);
}

/**
 * `mcp__<server>__<tool>`, made to fit `^[A-Za-z0-9_-]{1,64}$`: other characters become `_`;
 * a name too long, or one already `taken`, is cut and ends in `_` plus a hash of the original
 * server and tool names, so it stays the same from one start to the next.
 */
export function mcpToolName(server: string, tool: string, taken: (name: string) => boolean = () => false): string {
  const full = `mcp__${sanitize(server)}__${sanitize(tool)}`;
  if (full.length <= MAX_NAME && !taken(full)) return full;
  const hash = shortHash(`${server}\u0000${tool}`);
  for (let i = 1; ; i++) {
    const suffix = `_${hash}${i === 1 ? "" : i}`;
    const name = full.slice(0, MAX_NAME - suffix.length) + suffix;
    if (!taken(name)) return name;
  }
}
