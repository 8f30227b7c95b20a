import type { TestService } from "./harness";

export type SseEvent = { event: string | undefined; data: any };

/** Reads a Responses SSE body event by event (keepalive comments skipped). */
export function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const seen: SseEvent[] = [];
  async function next(): Promise<SseEvent | undefined> {
    for (;;) {
      const end = buf.indexOf("\n\n");
      if (end >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let event: string | undefined;
        const data: string[] = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (!data.length) continue; // a comment (keepalive)
        const ev = { event, data: JSON.parse(data.join("\n")) };
        seen.push(ev);
        return ev;
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buf += decoder.decode(value, { stream: true });
    }
  }
  return {
    seen,
    next,
    async until(type: string): Promise<SseEvent> {
      for (;;) {
        const ev = await next();
        if (!ev) throw new Error(`stream ended before ${type}; saw ${seen.map((e) => e.event).join(", ")}`);
        if (ev.data.type === type) return ev;
      }
    },
    /** Reads until `n` text deltas have arrived in all. */
    async deltas(n: number): Promise<string> {
      while (seen.filter((e) => e.data.type === "response.output_text.delta").length < n) {
        if (!(await next())) throw new Error(`stream ended after ${seen.length} events, before ${n} deltas`);
      }
      return text(seen);
    },
    async rest(): Promise<SseEvent[]> {
      const out: SseEvent[] = [];
      for (let ev = await next(); ev; ev = await next()) out.push(ev);
      return out;
    },
  };
}

/** The text of every delta seen, concatenated. */
export const text = (events: SseEvent[]) =>
  events.filter((e) => e.data.type === "response.output_text.delta").map((e) => e.data.delta as string).join("");

/** A streamed POST /api/v1/responses, read event by event. */
export async function openStream(t: TestService, body: Record<string, unknown>, token?: string) {
  const res = await t.api("/api/v1/responses", { method: "POST", json: { ...body, stream: true }, token });
  if (res.status !== 200 || !res.headers.get("content-type")?.includes("text/event-stream")) {
    throw new Error(`stream: ${res.status} ${await res.text()}`);
  }
  return sseReader(res.body!);
}
