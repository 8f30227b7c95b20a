// An OTLP/HTTP trace receiver on loopback: it keeps the spans sent to /v1/traces (JSON, as
// @opentelemetry/exporter-trace-otlp-http sends them), with their attributes made plain.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  status: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
const plain = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? ""));
const attrs = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/traces") return new Response("not found", { status: 404 });
      const body = (await req.json()) as any;
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
              status: s.status?.code ?? 0,
              attributes: attrs(s.attributes),
              resource,
            });
          }
        }
      }
      for (const w of waiters) w();
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    /** Resolves once a span matches, or fails after `timeoutMs`. */
    async until(pred: (s: ReceivedSpan) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.find(pred);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such span among ${spans.map((s) => s.name).join(", ") || "none"}`);
        await new Promise<void>((resolve) => {
          const w = () => (waiters.delete(w), clearTimeout(timer), resolve());
          const timer = setTimeout(w, Math.max(0, deadline - Date.now()));
          waiters.add(w);
        });
      }
    },
    close: () => server.stop(true),
  };
}
