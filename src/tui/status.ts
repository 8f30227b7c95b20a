import type { StreamState } from "../client/sse";
import type { ThreadSummary } from "../gateway/chat-wire";
import type { Focus } from "./layout";
import { fitWidth, textWidth } from "./cells";
import { escapeTags } from "./text";

/** The first entry of the thread list: starts a new conversation. */
export const NEW_THREAD = "+ new conversation";

/** What the keys do where the focus is, shown on the status line; the short form when the line is narrow. */
const HINTS: Record<Focus, [string, string]> = {
  input: ["Enter send · Shift+Enter newline · Tab focus · Esc cancel · ^L clear · ^C quit", "Enter send · Tab focus · ^C quit"],
  transcript: ["Up/Down PgUp/PgDn scroll · Home/End · Tab focus · Esc back · ^L clear · ^C quit", "Up/Down scroll · Esc back"],
  threads: ["Up/Down choose · Enter open · Tab focus · Esc back · ^C quit", "Enter open · Esc back"],
};

const CONNECTION: Record<StreamState, string> = {
  connecting: "{yellow-fg}connecting…{/yellow-fg}",
  connected: "{green-fg}● connected{/green-fg}",
  reconnecting: "{red-fg}○ reconnecting…{/red-fg}",
  unauthorized: "{red-fg}✗ token refused{/red-fg}",
};

/** Threads started elsewhere than a chat UI are labelled with their channel. */
const CHANNEL_LABELS: Record<string, string> = { webhook: "webhook", responses: "api" };

/** The thread list: the open one marked ●, the ones waiting on a gate marked ?, other channels labelled. */
export function threadLines(threads: ThreadSummary[], current: string | undefined): string[] {
  return [
    NEW_THREAD,
    ...threads.map((t) => {
      const label = t.channel ? CHANNEL_LABELS[t.channel] : undefined;
      return `${t.id === current ? "● " : "  "}${t.waiting ? "? " : ""}${label ? `[${label}] ` : ""}${t.title || "(untitled)"}`;
    }),
  ].map(escapeTags);
}

/**
 * The bottom line: model │ connection │ what the turn is doing │ key hints (the thread's
 * title is on the conversation's border). It fits `width` cells: the model gives way first,
 * then the hints take their short form; the hints never go.
 */
export function statusLine(s: {
  model: string;
  connection: StreamState;
  activity: "approval" | "thinking" | "ready";
  focus: Focus;
  width?: number;
}): string {
  const width = s.width ?? Number.POSITIVE_INFINITY;
  const plain = (tagged: string) => tagged.replace(/\{[^{}]*\}/g, "");
  const [long, short] = HINTS[s.focus];
  const tail = (hints: string, narrow = false) => {
    const activity = s.activity === "approval" ? `{yellow-fg}${narrow ? "approval" : "approval needed"} (Tab){/yellow-fg}` : s.activity === "thinking" ? "thinking…" : "ready";
    const connection = narrow ? CONNECTION[s.connection].replace(/ [^{]*/, "") : CONNECTION[s.connection];
    return ` │ ${connection} │ ${activity} │ ${hints}`;
  };
  const model = Math.min(textWidth(s.model), 20);
  const fits = (t: string) => textWidth(plain(t)) + 1 <= width;
  const rest = fits(tail(long) + " ".repeat(model)) ? tail(long) : fits(tail(short)) ? tail(short) : tail(short, true);
  const room = width - textWidth(plain(rest)) - 1;
  if (room < 4) return rest.slice(3);
  return ` ${escapeTags(fitWidth(s.model, room))}${rest}`;
}
