import type { TestService } from "./harness";

/** Opens GET /api/chat/events (live once it returns); `until` reads events until one matches. */
export async function chatEvents(t: TestService, token = t.token) {
  const res = await t.api("/api/chat/events", { token });
  if (res.status !== 200) throw new Error(`GET /api/chat/events: ${res.status}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  // the first frame (": connected") tells that the subscription is live
  while (!buf.includes(": connected")) buf += decoder.decode((await reader.read()).value);
  buf = "";
  const queue: any[] = [];
  const seen: any[] = [];
  return {
    seen,
    async until(pred: (e: any) => boolean): Promise<any> {
      for (;;) {
        while (queue.length) {
          const e = queue.shift();
          seen.push(e);
          if (pred(e)) return e;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the event stream ended");
        buf += decoder.decode(value);
        const frames = buf.split("\n\n");
        buf = frames.pop()!;
        for (const f of frames) {
          const lines = f.split("\n");
          const data = lines.find((l) => l.startsWith("data: "));
          if (!data) continue;
          const e = JSON.parse(data.slice(6));
          const name = lines.find((l) => l.startsWith("event: "))?.slice(7);
          if (name !== e.type) throw new Error(`SSE event "${name}" carries a "${e.type}" payload`);
          queue.push(e);
        }
      }
    },
    close: () => reader.cancel(),
  };
}
