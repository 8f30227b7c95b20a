import { ChatModel } from "../gateway/client/chat-model";
import type { ViewItem, Wording } from "../gateway/client/conversation";
import type { Decision } from "../gateway/chat-wire";
import { connectNotice } from "./gates";
import { brief, escapeTags, toolResult } from "./text";

/** How the TUI words what the shared chat model writes itself. */
export const TUI_WORDING: Wording = { cancelled: "Cancelled." };

/** The open conversation: one thread of the chat model (null: a new one), as blessed-tagged text. */
export class Transcript {
  constructor(
    readonly chat = new ChatModel(TUI_WORDING),
    public threadId: string | null = null,
    /** The service's address, which relative links are resolved against. */
    readonly serviceUrl = "",
  ) {}

  get entries(): ViewItem[] {
    return this.chat.items(this.threadId);
  }

  render(): string {
    return this.entries.map((item) => renderItem(item, this.serviceUrl)).join("\n\n");
  }
}

const DECIDED: Record<Decision, string> = { approve: "approved", deny: "denied", always: "always allowed" };

function renderItem(item: ViewItem, serviceUrl: string): string {
  switch (item.kind) {
    case "user":
      return `{cyan-fg}{bold}You:{/bold}{/cyan-fg} ${escapeTags(item.text)}`;
    case "assistant": {
      const text = `{green-fg}{bold}Assistant:{/bold}{/green-fg} ${escapeTags(item.text)}${item.streaming ? "{yellow-fg}▍{/yellow-fg}" : ""}`;
      return item.cutShort ? `${text}\n\n${notice("(cut short)")}` : text;
    }
    case "tool": {
      const head = `{magenta-fg}⚙ ${escapeTags(item.name)}{/magenta-fg} ${escapeTags(brief(item.arguments, 100))}`;
      if (item.output === null) return `${head} {yellow-fg}(running){/yellow-fg}`;
      const color = item.isError ? "red-fg" : "white-fg";
      return `${head}\n  {${color}}↳ ${escapeTags(brief(toolResult(item.output)) || "(no output)")}{/${color}}`;
    }
    case "approval": {
      const head = `{yellow-fg}{bold}Approval needed:{/bold}{/yellow-fg} ${escapeTags(item.tool)} ${escapeTags(brief(item.arguments, 100))}`;
      return item.decided
        ? `${head}\n  → ${DECIDED[item.decided]}`
        : `${head}\n  waiting: Tab to the approval prompt, then {bold}a{/bold} approve · {bold}d{/bold} deny · {bold}A{/bold} always allow ${escapeTags(item.tool)}`;
    }
    case "connect":
      return notice(connectNotice(item, serviceUrl));
    case "notice":
      return item.tone === "error" ? `{red-fg}{bold}Error:{/bold} ${escapeTags(item.text)}{/red-fg}` : notice(item.text);
    case "reasoning":
      // collapsed: one line that says it is there and how much there is
      return `{gray-fg}▸ ${item.streaming ? "thinking…" : "thought"} (${item.text.length} characters of reasoning, not kept){/gray-fg}`;
    case "compaction": {
      const notes = item.memoryNotes ? `, ${item.memoryNotes} memory note${item.memoryNotes === 1 ? "" : "s"} saved` : "";
      return `{gray-fg}── earlier turns summarised for the model (${item.summarisedItems} items${notes}) ──{/gray-fg}`;
    }
  }
}

const notice = (text: string) => `{blue-fg}${escapeTags(text)}{/blue-fg}`;
