export const KEEPALIVE_MS = 15_000;

const encoder = new TextEncoder();

/**
 * A Server-Sent Events response, the one writer of every stream the service serves.
 * `open` subscribes to the events: it calls `send` for each (the SSE `event:` is its
 * `type`), `end` when there are no more, and returns what stops the subscription. A
 * `: keepalive` comment goes out every 15 s. When nothing was sent while subscribing, the
 * `hello` comment goes out at once: Bun sends the headers with the first chunk, and a reader
 * knows the stream is live. A reader that goes away stops only its own subscription.
 * `stillAllowed`, asked at each keepalive, ends a stream whose reader lost the right to it
 * (a token revoked, a user suspended).
 */
export function sseResponse(
  open: (send: (event: { type: string }) => void, end: () => void) => () => void,
  hello: string,
  opts: { signal?: AbortSignal; stillAllowed?: () => Promise<boolean> } = {},
): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let live = true;
      const write = (text: string) => {
        if (!live) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      let unsubscribe = () => {};
      const end = () => {
        const wasLive = live;
        stop();
        if (wasLive) controller.close();
      };
      const keepalive = setInterval(async () => {
        if (opts.stillAllowed && !(await opts.stillAllowed().catch(() => true))) return end();
        write(": keepalive\n\n");
      }, KEEPALIVE_MS);
      // a stream the server dropped at shutdown without cancelling it must not hold the process
      keepalive.unref?.();
      stop = () => {
        live = false;
        clearInterval(keepalive);
        unsubscribe();
      };
      let sent = false;
      unsubscribe = open((e) => {
        sent = true;
        write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      }, end);
      if (!live) unsubscribe();
      else if (!sent) write(`: ${hello}\n\n`);
      opts.signal?.addEventListener("abort", () => stop(), { once: true });
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
