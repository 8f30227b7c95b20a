// Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing.ts).
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TurnEvent, TurnInfo } from "../agent/bus";
import type { Tracing, TracingOptions } from "./tracing";

/** What the agent is called in its spans (`gen_ai.agent.name`). */
const AGENT = "service";

/**
 * A span per turn (`invoke_agent`), with a child per LLM request (`chat <model>`) and per tool
 * call (`execute_tool <tool>`), named and attributed after the OpenTelemetry GenAI semantic
 * conventions, sent in batches over OTLP/HTTP. Message contents are not recorded.
 */
export function otelTracing(opts: TracingOptions & { endpoint: string }): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": opts.serviceName, "service.version": opts.version }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, "")}/v1/traces` }) })],
  });
  const tracer = provider.getTracer("service", opts.version);
  const turns = new Map<string, { span: Span; tools: Map<string, Span> }>();
  const child = (turn: TurnInfo, name: string, kind: SpanKind, attributes: Attributes, startTime?: number) => {
    const parent = turns.get(turn.id)?.span;
    return tracer.startSpan(name, { kind, attributes, startTime }, parent ? trace.setSpan(context.active(), parent) : undefined);
  };

  const unsubscribe = opts.bus.subscribe((turn: TurnInfo, e: TurnEvent) => {
    switch (e.type) {
      case "turn.started": {
        const span = tracer.startSpan(`invoke_agent ${AGENT}`, {
          kind: SpanKind.INTERNAL,
          startTime: turn.startedAt,
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": turn.threadId,
            "gen_ai.response.id": turn.id,
            "gen_ai.request.model": e.request.model,
            "service.channel": turn.channel,
            "enduser.id": turn.userId,
            ...(turn.origin?.jobId ? { "service.job.id": turn.origin.jobId } : {}),
            ...(turn.origin?.routineId ? { "service.routine.id": turn.origin.routineId } : {}),
          },
        });
        turns.set(turn.id, { span, tools: new Map() });
        return;
      }
      case "llm.request": {
        const attributes: Attributes = {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": e.model,
          "gen_ai.response.model": e.model,
          "gen_ai.conversation.id": turn.threadId,
        };
        if (e.usage) {
          attributes["gen_ai.usage.input_tokens"] = e.usage.inputTokens;
          attributes["gen_ai.usage.output_tokens"] = e.usage.outputTokens;
          attributes["gen_ai.usage.cache_read.input_tokens"] = e.usage.cachedTokens;
          attributes["gen_ai.usage.reasoning.output_tokens"] = e.usage.reasoningTokens;
          attributes["service.cost_usd"] = e.usage.costUsd;
        }
        const span = child(turn, `chat ${e.model}`, SpanKind.CLIENT, attributes, e.startedAt);
        if (e.outcome !== "ok") {
          span.setAttribute("error.type", e.outcome);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end(e.endedAt);
        return;
      }
      case "tool.started": {
        const span = child(turn, `execute_tool ${e.item.name}`, SpanKind.INTERNAL, {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": e.item.name,
          "gen_ai.tool.call.id": e.item.call_id,
          "gen_ai.tool.type": "function",
        });
        turns.get(turn.id)?.tools.set(e.item.call_id, span);
        return;
      }
      case "tool.completed": {
        const open = turns.get(turn.id);
        const span = open?.tools.get(e.item.call_id);
        if (!span) return;
        open!.tools.delete(e.item.call_id);
        if (e.isError) {
          span.setAttribute("error.type", "tool_error");
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
        return;
      }
      case "turn.completed": {
        const open = turns.get(turn.id);
        if (!open) return;
        turns.delete(turn.id);
        for (const span of open.tools.values()) span.end();
        const { span } = open;
        const r = e.result;
        if (r) {
          span.setAttributes({
            "gen_ai.usage.input_tokens": r.usage.inputTokens,
            "gen_ai.usage.output_tokens": r.usage.outputTokens,
            "service.cost_usd": r.usage.costUsd,
            "service.turn.status": r.status,
          });
        }
        const code = r ? r.error?.code : "lost";
        if (code) {
          span.setAttribute("error.type", code);
          span.setStatus({ code: SpanStatusCode.ERROR, message: r?.error?.message ?? e.error?.message });
        }
        span.end();
        return;
      }
    }
  });
  opts.log.info(`tracing: turns, LLM requests and tool calls go to ${opts.endpoint} (OTLP/HTTP)`, { endpoint: opts.endpoint });
  return {
    async shutdown() {
      unsubscribe();
      await provider.shutdown().catch((e) => opts.log.warn("tracing: the last spans could not be sent", { error: (e as Error).message }));
    },
  };
}
