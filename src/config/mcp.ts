import { Type, type Static } from "@sinclair/typebox";

const common = {
  /** Tools of a trusted server run without asking; others default to the `ask` policy. */
  trusted: Type.Optional(Type.Boolean()),
  /** How long one tool call may take before it is cancelled (default 60 s). */
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Keeps the entry in config.json without starting the server. */
  disabled: Type.Optional(Type.Boolean()),
  /**
   * false: the server cannot send anything out of the box (it only reads or acts locally), so
   * its calls need no approval in a turn that read untrusted content. Default: it may.
   */
  egress: Type.Optional(Type.Boolean()),
  /** `owner` (default): only the instance owner's turns use it; `all`: every user's. */
  scope: Type.Optional(Type.Union([Type.Literal("owner"), Type.Literal("all")])),
  /** Only these of the server's tools (its own names, `*` globs) are registered; all when absent. */
  tools: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  /** None of these of the server's tools (its own names, `*` globs) is registered. */
  excludeTools: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
};

/** A server the service starts as a child process and talks to over stdin/stdout. */
export const McpStdioServer = Type.Object({
  type: Type.Optional(Type.Literal("stdio")),
  command: Type.String({ minLength: 1 }),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  cwd: Type.Optional(Type.String({ minLength: 1 })),
  ...common,
});

/** A server reached over Streamable HTTP. */
export const McpHttpServer = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal("http"), Type.Literal("streamable-http")])),
  url: Type.String({ minLength: 1 }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  ...common,
});

/** The `mcpServers` entries of config.json, in the format other MCP clients use. */
export const McpServers = Type.Record(Type.String({ minLength: 1 }), Type.Union([McpStdioServer, McpHttpServer]), {
  description:
    "MCP servers by name: `{command, args, env, cwd}` (stdio) or `{url, headers}` (Streamable HTTP), with `trusted`, `timeoutMs`, `disabled`, `tools` and `excludeTools`; see MCP servers (config.json only)",
});
export type McpServerConfig = Static<typeof McpStdioServer> | Static<typeof McpHttpServer>;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const isStringMap = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === "string");

/**
 * Says what is wrong with `mcpServers` in words an operator can act on (a TypeBox union
 * error only says "Expected union value"); undefined when it is well-formed.
 */
export function mcpServersProblem(servers: unknown): string | undefined {
  if (!isObject(servers)) return "mcpServers must be an object of server name → server";
  for (const [name, s] of Object.entries(servers)) {
    const at = `mcpServers.${name}`;
    if (!name.trim()) return "mcpServers has a server with an empty name";
    if (!isObject(s)) return `${at} must be an object with "command" (stdio) or "url" (Streamable HTTP)`;
    if (s.type === "sse") return `${at}: the SSE transport is not supported; use a Streamable HTTP "url"`;
    const hasCommand = "command" in s;
    const hasUrl = "url" in s;
    if (hasCommand && hasUrl) return `${at} has both "command" and "url"; a server is either stdio or Streamable HTTP`;
    if (!hasCommand && !hasUrl) return `${at} needs "command" (a stdio server) or "url" (a Streamable HTTP server)`;
    if (hasCommand) {
      if (typeof s.command !== "string" || !s.command) return `${at}.command must be a non-empty string`;
      if (s.type !== undefined && s.type !== "stdio") return `${at}.type must be "stdio" for a server with a command`;
      if (s.args !== undefined && (!Array.isArray(s.args) || s.args.some((a) => typeof a !== "string"))) {
        return `${at}.args must be an array of strings`;
      }
      if (s.env !== undefined && !isStringMap(s.env)) return `${at}.env must be an object of string values`;
      if (s.cwd !== undefined && (typeof s.cwd !== "string" || !s.cwd)) return `${at}.cwd must be a non-empty string`;
    } else {
      if (typeof s.url !== "string" || !URL.canParse(s.url) || !/^https?:$/.test(new URL(s.url).protocol)) {
        return `${at}.url must be an http:// or https:// URL`;
      }
      if (s.type !== undefined && s.type !== "http" && s.type !== "streamable-http") {
        return `${at}.type must be "http" or "streamable-http" for a server with a url`;
      }
      if (s.headers !== undefined && !isStringMap(s.headers)) return `${at}.headers must be an object of string values`;
    }
    if (s.trusted !== undefined && typeof s.trusted !== "boolean") return `${at}.trusted must be true or false`;
    if (s.disabled !== undefined && typeof s.disabled !== "boolean") return `${at}.disabled must be true or false`;
    if (s.egress !== undefined && typeof s.egress !== "boolean") return `${at}.egress must be true or false`;
    if (s.scope !== undefined && s.scope !== "owner" && s.scope !== "all") return `${at}.scope must be "owner" or "all"`;
    if ("includeTools" in s) return `${at}.includeTools: the allow list is called "tools" here`;
    for (const key of ["tools", "excludeTools"] as const) {
      const list = s[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.some((p) => typeof p !== "string" || !p)) {
        return `${at}.${key} must be an array of the server's tool names, where * matches any run of characters (["read_*", "list_directory"])`;
      }
      if (key === "tools" && !list.length) return `${at}.tools is empty, which would offer none of its tools: remove it to offer them all, or set "disabled": true`;
    }
    if (s.timeoutMs !== undefined && !(Number.isInteger(s.timeoutMs) && (s.timeoutMs as number) >= 1)) {
      return `${at}.timeoutMs must be a positive integer (milliseconds)`;
    }
  }
  return undefined;
}
