import type { TurnBus } from "../agent/bus";
import type { Logger } from "../log";

export interface Tracing {
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces go to `<endpoint>/v1/traces`. */
  endpoint: string | undefined;
  serviceName: string;
  version: string;
  bus: TurnBus;
  log: Logger;
}

/**
 * OpenTelemetry traces of turns, LLM requests and tool calls, when an OTLP endpoint is set.
 * Without one nothing of the SDK is loaded: it is imported only here, on demand.
 */
export async function startTracing(opts: TracingOptions): Promise<Tracing | undefined> {
  if (!opts.endpoint) return undefined;
  const { otelTracing } = await import("./otel");
  return otelTracing({ ...opts, endpoint: opts.endpoint });
}
