import { Elysia } from "elysia";
import { requireAuth } from "../http/auth";
import type { Services } from "../services";
import type { LoopPauses } from "../observability/loop-pauses";
import { StatusReply } from "./status-reply";

const loopPausesReply = (p: LoopPauses) => ({ max_pause_ms_5s: p.pauseMs, max_held_ms_5s: p.heldMs });

export function statusRoutes(s: Services) {
  return new Elysia({ name: "status" })
    .get("/health", () => ({ status: "ok" }))
    .use(requireAuth(s))
    .get(
      "/api/status",
      ({ principal }) => ({
        status: "ok",
        version: s.version,
        uptime_s: Math.floor((Date.now() - s.startedAt) / 1000),
        build: s.build,
        llm: { configured: s.llm.configured, model: s.llm.model ?? null, context_window: s.contextWindow.reading, streams: s.llmStreams.counts() },
        channels: s.channels,
        revision: s.config.responses.revision,
        mcp: {
          servers: (s.mcp?.status() ?? []).map((m) => (principal.role === "member" ? { ...m, error: m.error ? "unavailable" : null } : m)),
        },
        memory: { search: s.memory.mode, embedding_model: s.memory.embeddingModel ?? null },
        event_loop: loopPausesReply(s.loopPauses.max()),
      }),
      { response: StatusReply },
    );
}
