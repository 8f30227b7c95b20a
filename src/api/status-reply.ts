import { Type, type Static } from "@sinclair/typebox";
import { McpServerStatus } from "../mcp/status";

/** GET /api/status: what `service status`, the TUI and the web UI read of a running service. */
export const StatusReply = Type.Object({
  status: Type.Literal("ok"),
  version: Type.String(),
  uptime_s: Type.Integer(),
  /** Which build runs; `date` is null when it runs from source. */
  build: Type.Object({ version: Type.String(), commit: Type.String(), date: Type.Union([Type.String(), Type.Null()]) }),
  llm: Type.Object({
    configured: Type.Boolean(),
    model: Type.Union([Type.String(), Type.Null()]),
    /** The window every request is made to fit, and where it came from ("config", "default", "Ollama num_ctx of qwen3:8b"). */
    context_window: Type.Object({
      tokens: Type.Integer(),
      source: Type.Union([Type.Literal("config"), Type.Literal("server"), Type.Literal("default")]),
      from: Type.String(),
    }),
    /** Model requests streaming now, and steps waiting for one of them to end (`llm.maxConcurrent`). */
    streams: Type.Object({ limit: Type.Integer(), active: Type.Integer(), waiting: Type.Integer() }),
  }),
  channels: Type.Object({ gateway: Type.Boolean(), webhook: Type.Boolean(), tui: Type.Boolean() }),
  revision: Type.Union([Type.Literal("A"), Type.Literal("B")]),
  /** A server's last error may quote its stderr: a member sees "unavailable" there. */
  mcp: Type.Object({ servers: Type.Array(McpServerStatus) }),
  memory: Type.Object({ search: Type.String(), embedding_model: Type.Union([Type.String(), Type.Null()]) }),
  /**
   * The longest the event loop was held up in the last 5 seconds (a timer's lateness, sampled
   * every 10 ms), and the part of it the service's own thread spent working (the rest was the
   * machine running other processes).
   */
  event_loop: Type.Object({ max_pause_ms_5s: Type.Number(), max_held_ms_5s: Type.Number() }),
});
export type StatusReply = Static<typeof StatusReply>;
