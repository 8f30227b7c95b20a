import type { StreamState } from "../gateway/client/sse";
import type { ThreadSummary } from "../gateway/chat-wire";
import type { Focus } from "./layout";
import { brief, escapeTags } from "./text";

/** The first entry of the thread list: starts a new conversation. */
export const NEW_THREAD = "+ new conversation";

/** What the keys do where the focus is, shown on the status line. */
const HINTS: Record<Focus, string> = {
  input: "Enter send · Shift+Enter newline · Tab focus · Esc cancel · ^L clear · ^C quit",
  transcript: "Up/Down PgUp/PgDn scroll · Home/End · Tab focus · Esc back · ^L clear · ^C quit",
  threads: "Up/Down choose · Enter open · Tab focus · Esc back · ^C quit",
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

/** The bottom line: model │ thread │ connection │ what the turn is doing │ key hints. */
export function statusLine(s: {
  model: string;
  thread: { id: string; title: string | null } | undefined;
  connection: StreamState;
  activity: "approval" | "thinking" | "ready";
  focus: Focus;
}): string {
  const thread = s.thread ? escapeTags(brief(s.thread.title || s.thread.id.slice(0, 8), 24)) : "new";
  const activity = s.activity === "approval" ? "{yellow-fg}approval needed (Tab){/yellow-fg}" : s.activity === "thinking" ? "thinking…" : "ready";
  return ` ${escapeTags(s.model)} │ ${thread} │ ${CONNECTION[s.connection]} │ ${activity} │ ${HINTS[s.focus]}`;
}
