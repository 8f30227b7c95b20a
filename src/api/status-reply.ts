import { Type, type Static } from "@sinclair/typebox";
import { McpServerStatus } from "../mcp/status";

/** GET /api/status: what `service status`, the TUI and the web UI read of a running service. */
export const StatusReply = Type.Object({
  status: Type.Literal("ok"),
  version: Type.String(),
  uptime_s: Type.Integer(),
  llm: Type.Object({ configured: Type.Boolean(), model: Type.Union([Type.String(), Type.Null()]) }),
  channels: Type.Object({ gateway: Type.Boolean(), webhook: Type.Boolean(), tui: Type.Boolean() }),
  revision: Type.Union([Type.Literal("A"), Type.Literal("B")]),
  /** A server's last error may quote its stderr: a member sees "unavailable" there. */
  mcp: Type.Object({ servers: Type.Array(McpServerStatus) }),
  memory: Type.Object({ search: Type.String(), embedding_model: Type.Union([Type.String(), Type.Null()]) }),
});
export type StatusReply = Static<typeof StatusReply>;
