export const KEEPALIVE_MS = 15_000;

/**
 * How many frames a reader may fall behind before its stream is ended: a reader that does
 * not keep up (a stalled tab, a slow link) is let go rather than held in memory, and what it
 * missed it reads again when it reconnects.
 */
export const MAX_BACKLOG_FRAMES = 1_000;

const encoder = new TextEncoder();

/**
 * Each event's frame, made once: an event sent to many streams (a user's open tabs) is
 * serialised for the first and the same bytes go to all.
 */
const frames = new WeakMap<object, Uint8Array>();
function frameOf(e: { type: string } | Uint8Array): Uint8Array {
  if (e instanceof Uint8Array) return e;
  let frame = frames.get(e);
  if (!frame) frames.set(e, (frame = encoder.encode(sseText(e))));
  return frame;
}

const sseText = (e: { type: string }) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/**
 * An event's frame, not kept: for a sender that keeps its events and makes each frame once
 * for all its streams (a running response), where the cache would hold every frame as long
 * as the event.
 */
export const sseFrame = (e: { type: string }): Uint8Array => encoder.encode(sseText(e));

/** Events as one chunk of SSE frames, for a sender that serialises once for many streams (`send` takes it as is). */
export function sseFrames(events: { type: string }[]): Uint8Array {
  return encoder.encode(events.map(sseText).join(""));
}

/**
 * A Server-Sent Events response, the one writer of every stream the service serves.
 * `open` subscribes to the events: it calls `send` for each (the SSE `event:` is its
 * `type`), `end` when there are no more, and returns what stops the subscription. A
 * `: keepalive` comment goes out every 15 s. When nothing was sent while subscribing, the
 * `hello` comment goes out at once: Bun sends the headers with the first chunk, and a reader
 * knows the stream is live. A reader that goes away stops only its own subscription.
 * `stillAllowed`, asked at each keepalive, ends a stream whose reader lost the right to it
 * (a token revoked, a user suspended). Sending never waits for the reader: one that falls
 * more than MAX_BACKLOG_FRAMES behind is ended.
 */
export function sseResponse(
  open: (send: (event: { type: string } | Uint8Array) => void, end: () => void) => () => void,
  hello: string,
  opts: { signal?: AbortSignal; stillAllowed?: () => Promise<boolean> } = {},
): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let live = true;
      const write = (bytes: Uint8Array) => {
        if (!live) return;
        try {
          controller.enqueue(bytes);
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
        write(encoder.encode(": keepalive\n\n"));
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
        write(frameOf(e));
        if ((controller.desiredSize ?? 0) < -MAX_BACKLOG_FRAMES) end();
      }, end);
      if (!live) unsubscribe();
      else if (!sent) write(encoder.encode(`: ${hello}\n\n`));
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
