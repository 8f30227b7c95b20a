import { ChatModel } from "../client/chat-model";
import type { ItemOf, ViewItem, Wording } from "../client/conversation";
import type { Decision } from "../gateway/chat-wire";
import { connectNotice } from "./gates";
import { markdownToTags } from "./markdown";
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
    let tools = 0;
    return this.entries.map((item) => renderItem(item, this.serviceUrl, item.kind === "tool" ? ++tools : 0)).join("\n\n");
  }

  /** The `n`th tool call shown (from 1), for /show. */
  tool(n: number): ItemOf<"tool"> | undefined {
    return this.entries.filter((i): i is ItemOf<"tool"> => i.kind === "tool")[n - 1];
  }
}

const DECIDED: Record<Decision, string> = { approve: "approved", deny: "denied", always: "always allowed" };

/** How many lines of a tool's result the conversation shows; /show N opens the rest. */
const RESULT_LINES = 3;

function renderItem(item: ViewItem, serviceUrl: string, toolNumber: number): string {
  switch (item.kind) {
    case "user": {
      const alt = item.branch ? `\n{gray-fg}  alternative ${item.branch.current} of ${item.branch.count} (/alt N shows another){/gray-fg}` : "";
      return `{cyan-fg}{bold}You:{/bold}{/cyan-fg} ${escapeTags(item.text)}${alt}`;
    }
    case "assistant": {
      const text = `{green-fg}{bold}Assistant:{/bold}{/green-fg} ${markdownToTags(item.text)}${item.streaming ? "{yellow-fg}▍{/yellow-fg}" : ""}`;
      return item.cutShort ? `${text}\n\n${notice("(cut short)")}` : text;
    }
    case "tool": {
      const head = `{magenta-fg}⚙ ${toolNumber}. ${escapeTags(item.name)}{/magenta-fg} ${escapeTags(brief(item.arguments, 100))}`;
      if (item.output === null) return `${head} {yellow-fg}(running){/yellow-fg}`;
      const color = item.refused ? "yellow-fg" : item.isError ? "red-fg" : "white-fg";
      const state = item.refused ? "refused (you denied it): " : "";
      const lines = toolResult(item.output).trim().split("\n");
      const shown = lines.slice(0, RESULT_LINES).map((l) => brief(l, 160));
      const cut = lines.length > RESULT_LINES || shown.some((l, i) => l !== lines[i]!.trim());
      const [first = "", ...rest] = shown;
      const body = [`↳ ${state}${escapeTags(first) || "(no output)"}`, ...rest.map((l) => `  ${escapeTags(l)}`)].map((l) => `{${color}}${l}{/${color}}`);
      if (cut) body.push(`{gray-fg}  … /show ${toolNumber} to read it whole{/gray-fg}`);
      return [head, ...body].join("\n");
    }
    case "approval": {
      const head = `{yellow-fg}{bold}Approval needed:{/bold}{/yellow-fg} ${escapeTags(item.tool)} ${escapeTags(brief(item.arguments, 100))}`;
      const where = item.destination ? `\n  the data would go to {bold}${escapeTags(item.destination)}{/bold}` : "";
      return item.decided
        ? `${head}${where}\n  → ${DECIDED[item.decided]}`
        : `${head}${where}\n  waiting: Tab to the approval prompt, then {bold}a{/bold} approve · {bold}d{/bold} deny · {bold}A{/bold} always allow ${escapeTags(item.tool)}`;
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
