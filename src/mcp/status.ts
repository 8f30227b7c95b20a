import { Type, type Static } from "@sinclair/typebox";

/** A configured MCP server as GET /api/status shows it (no SDK here: the client is loaded on first use). */
export const McpServerStatus = Type.Object({
  name: Type.String(),
  transport: Type.Union([Type.Literal("stdio"), Type.Literal("http")]),
  /** `restarting`: it was ready and went away; `failed`: the last attempt to start it failed. */
  state: Type.Union([Type.Literal("starting"), Type.Literal("ready"), Type.Literal("restarting"), Type.Literal("failed")]),
  tools: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type McpServerStatus = Static<typeof McpServerStatus>;
