// The gates a turn can stop at, as the TUI puts them to the user: a tool call waiting for
// approval (a dialog that takes the a/d/A keys while it is open), and a tool waiting for its extension to be connected
// (a notice saying which page of the web UI connects it).
import type { ItemOf } from "../client/conversation";
import { pendingApproval } from "../client/conversation";
import { ApiError, type ChatClient } from "../client/http";
import type { Decision } from "../gateway/chat-wire";
import type { Layout } from "./layout";
import { brief, escapeTags } from "./text";
import type { Transcript } from "./transcript";

/** The keys that decide: only in the approval prompt, never in the message line (typed text is text). */
const DIALOG_KEYS: Record<string, Decision> = { a: "approve", d: "deny", A: "always", y: "approve", n: "deny" };

/** Connecting happens in a browser: the notice says where. */
export function connectNotice(item: ItemOf<"connect">, serviceUrl: string): string {
  let where = `${serviceUrl}/`;
  try {
    if (item.url) where = new URL(item.url, serviceUrl).href;
  } catch {}
  return `${item.tool} needs the extension ${item.extension} connected to your account. Open ${where} in a browser; the reply goes on once it is connected.`;
}

export interface PromptContext {
  client: ChatClient;
  transcript: Transcript;
  layout: Layout;
  /** Something changed: draw again. */
  changed: () => void;
}

/** The approval the open conversation waits for, and the dialog that asks for it. */
export class ApprovalPrompt {
  #open = false;

  constructor(readonly ctx: PromptContext) {}

  /** The approval still to be decided in the open conversation. */
  get pending(): ItemOf<"approval"> | undefined {
    return pendingApproval(this.ctx.transcript.entries);
  }

  get open(): boolean {
    return this.#open;
  }

  /** Opens the dialog (if an approval is pending) or closes it. */
  show(open: boolean): void {
    const p = this.pending;
    this.#open = open && !!p;
    this.ctx.layout.dialog(this.#open && p ? promptText(p) : null);
    this.ctx.changed();
  }

  /** A key while the dialog is open. */
  dialogKey(ch: string | undefined, keyName: string): void {
    if (keyName === "escape") return this.show(false);
    const decision = ch ? DIALOG_KEYS[ch] : undefined;
    if (decision) void this.decide(decision);
  }

  /** Sends the decision; the turn it resumes reports on the event stream. */
  async decide(decision: Decision): Promise<void> {
    const p = this.pending;
    if (!p) return;
    const { chat } = this.ctx.transcript;
    chat.updateApproval(p.threadId, p.callId, { decided: decision, busy: true, error: null });
    this.show(false);
    try {
      await this.ctx.client.decide(p.threadId, decision);
      chat.updateApproval(p.threadId, p.callId, { busy: false });
    } catch (e) {
      const message =
        e instanceof ApiError && e.status === 404 && /no such route/i.test(e.message)
          ? "this service does not take approvals over HTTP (no /api/chat/approvals)"
          : (e as Error).message;
      chat.updateApproval(p.threadId, p.callId, { decided: null, busy: false, error: message });
      chat.notice(p.threadId, "error", `The decision was not taken: ${message}`);
    }
  }
}

/** The approval dialog: the call, where its data would go, an identity file's change (+ green, - red), the keys. */
function promptText(p: ItemOf<"approval">): string {
  const parts = [`{bold}${escapeTags(p.tool)}{/bold} wants to run with:\n${escapeTags(brief(p.arguments, 400))}`];
  if (p.destination) {
    parts.push(`The data would go to {bold}${escapeTags(p.destination)}{/bold}: this call could carry it out of this machine, and this turn has read content from outside.`);
  }
  if (p.diff) {
    const lines = p.diff.replace(/\n$/, "").split("\n").map((l) => {
      const color = l.startsWith("+++") || l.startsWith("---") || l.startsWith("@@") ? "gray-fg" : l.startsWith("+") ? "green-fg" : l.startsWith("-") ? "red-fg" : "";
      return color ? `{${color}}${escapeTags(l)}{/${color}}` : escapeTags(l);
    });
    parts.push(`The change:\n${lines.join("\n")}`);
  }
  parts.push("{bold}a{/bold} approve   {bold}d{/bold} deny   {bold}A{/bold} always allow   {bold}Esc{/bold} decide later (Tab comes back)   Up/Down scroll");
  return parts.join("\n\n");
}
