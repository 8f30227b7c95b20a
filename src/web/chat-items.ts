import type { ItemOf, ViewItem } from "../client/conversation";
import { announcer } from "./announcer";
import { copyText } from "./clipboard";
import { decorateMarkdown } from "./rendered-markdown";
import { fill, h, prettyJson } from "./dom";
import { renderMarkdown } from "./markdown";
import type { Decision } from "./wire";

/** What a conversation item can ask of the chat screen. */
export interface ItemActions {
  decide(threadId: string, callId: string, decision: Decision): void;
  regenerate(): void;
  /** Edit the last user message (it goes to the message box). */
  edit(text: string): void;
  switchBranch(itemId: string, branch: number): void;
}

/** Where an item stands in its conversation: which actions it offers. */
export interface ItemPlace {
  /** No answer runs and no approval waits: the conversation can be changed. */
  idle: boolean;
  /** The user's last message (Edit). */
  lastUser: boolean;
  /** The last answer (Regenerate). */
  lastAnswer: boolean;
  /** The notice that ends the conversation after a failure or a Stop (Retry). */
  lastEnding: boolean;
}

export interface ItemView {
  el: HTMLElement;
  update(item: ViewItem, place: ItemPlace): void;
}

/** Shown under an answer that was stored cut short. */
const CUT_SHORT = "This answer was cut short.";

/** The element for one conversation item; `update` changes it in place as the item grows. */
export function itemView(item: ViewItem, actions: ItemActions): ItemView {
  switch (item.kind) {
    case "user":
      return userView(actions);
    case "assistant":
      return assistantView(actions);
    case "tool":
      return toolView();
    case "approval":
      return approvalView(actions);
    case "connect":
      return connectView();
    case "notice":
      return noticeView(actions);
    case "compaction":
      return compactionView();
    case "reasoning":
      return reasoningView();
  }
}

/** The model's reasoning, collapsed: a person opens it if they want to see how it got there. */
function reasoningView(): ItemView {
  const label = h("span", { class: "thinking-label" });
  const body = h("div", { class: "thinking-text", dir: "auto", lang: "" });
  const el = h("details", { class: "thinking" }, h("summary", null, label), body);
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"reasoning">;
      el.classList.toggle("streaming", item.streaming);
      label.textContent = item.streaming ? "Thinking…" : "Thought";
      body.textContent = item.text;
    },
  };
}

/** A divider where earlier turns were summarised; the summary the model now sees opens below it. */
function compactionView(): ItemView {
  const label = h("span", { class: "compaction-label" });
  const body = h("div", { class: "compaction-summary", dir: "auto", lang: "" });
  const el = h("details", { class: "compaction" }, h("summary", null, label), body);
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"compaction">;
      const notes = item.memoryNotes ? `, ${item.memoryNotes} memory note${item.memoryNotes === 1 ? "" : "s"} saved` : "";
      label.textContent = `Earlier turns summarised (${item.summarisedItems} items${notes})`;
      body.textContent = item.summary;
    },
  };
}

/** A small text button under a message. */
const action = (label: string, onclick: () => void, extra: Record<string, unknown> = {}) =>
  h("button", { type: "button", class: "ghost msg-action", text: label, onclick, ...extra });

/** A Copy button for `text()`, which says it copied. */
function copyButton(text: () => string, what: string): HTMLButtonElement {
  const button = action("Copy", async () => {
    const ok = await copyText(text());
    button.textContent = ok ? "Copied" : "Copy failed";
    announcer.say(ok ? `${what} copied.` : `The ${what.toLowerCase()} could not be copied.`);
    setTimeout(() => (button.textContent = "Copy"), 1500);
  }, { "aria-label": `Copy ${what.toLowerCase()}` });
  return button;
}

function userView(actions: ItemActions): ItemView {
  const bubble = h("div", { class: "bubble", dir: "auto", lang: "" });
  const tools = h("div", { class: "msg-actions" });
  const el = h("div", { class: "msg user" }, h("span", { class: "sr-only", text: "You: " }), bubble, tools);
  let text = "";
  return {
    el,
    update(raw, place) {
      const item = raw as ItemOf<"user">;
      text = item.text;
      bubble.textContent = text;
      const b = item.branch;
      fill(
        tools,
        b ? branchArrows(item.id, b, place.idle, actions) : null,
        copyButton(() => text, "Message"),
        place.lastUser && place.idle ? action("Edit", () => actions.edit(text), { "aria-label": "Edit your last message", title: "Edit (Up in an empty message box)" }) : null,
      );
    },
  };
}

/** ‹ 2 / 3 ›: the alternatives where the conversation forks at this message. */
function branchArrows(itemId: string, b: { current: number; count: number }, enabled: boolean, actions: ItemActions): HTMLElement {
  const go = (n: number, label: string, text: string) =>
    h("button", {
      type: "button",
      class: "ghost msg-action arrow",
      text,
      "aria-label": label,
      disabled: !enabled || n < 1 || n > b.count,
      onclick: () => actions.switchBranch(itemId, n),
    });
  return h(
    "span",
    { class: "branches", role: "group", "aria-label": `Alternative ${b.current} of ${b.count}` },
    go(b.current - 1, "Previous alternative", "‹"),
    h("span", { class: "branch-count", "aria-hidden": "true", text: `${b.current} / ${b.count}` }),
    go(b.current + 1, "Next alternative", "›"),
  );
}

function assistantView(actions: ItemActions): ItemView {
  const body = h("div", { class: "md", dir: "auto", lang: "" });
  const cutShort = h("p", { class: "notice info", text: CUT_SHORT, hidden: true });
  const tools = h("div", { class: "msg-actions" });
  const el = h("div", { class: "msg assistant" }, h("span", { class: "sr-only", text: "Assistant: " }), body, cutShort, tools);
  let shown: string | null = null;
  let frame = 0;
  let latest = "";
  const paint = () => {
    frame = 0;
    if (latest === shown) return;
    shown = latest;
    body.innerHTML = renderMarkdown(latest);
    decorateMarkdown(body, (m) => announcer.say(m));
  };
  return {
    el,
    update(raw, place) {
      const item = raw as ItemOf<"assistant">;
      el.classList.toggle("streaming", item.streaming);
      el.setAttribute("aria-busy", String(item.streaming));
      latest = item.text;
      cutShort.hidden = !item.cutShort;
      // many deltas a second: render at most once per frame while streaming
      if (!item.streaming) paint();
      else if (!frame) frame = requestAnimationFrame(paint);
      tools.hidden = item.streaming;
      fill(
        tools,
        copyButton(() => latest, "Answer"),
        place.lastAnswer && place.idle ? action(item.cutShort ? "Retry" : "Regenerate", () => actions.regenerate(), { title: "Answer the last message again; this answer stays one arrow away" }) : null,
      );
    },
  };
}

function toolView(): ItemView {
  const name = h("span", { class: "tool-name" });
  const status = h("span", { class: "tool-status" });
  const args = h("pre", { class: "code", tabindex: 0, "aria-label": "Arguments" });
  const output = h("pre", { class: "code", tabindex: 0, "aria-label": "Result", dir: "auto" });
  const resultBlock = h("div", null, h("div", { class: "label", text: "Result" }), output);
  const el = h(
    "details",
    { class: "tool" },
    h("summary", null, h("span", { class: "tool-icon", "aria-hidden": "true" }), h("span", { class: "tool-label", text: "Tool" }), name, status),
    h("div", { class: "tool-body" }, h("div", { class: "label", text: "Arguments" }), args, resultBlock),
  );
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"tool">;
      name.textContent = item.name;
      const state = item.output === null ? "running" : item.refused ? "refused" : item.isError ? "error" : "done";
      el.dataset.state = state;
      status.textContent = { running: "running…", refused: "refused: you denied it", error: "failed", done: "done" }[state];
      args.textContent = prettyJson(item.arguments);
      resultBlock.hidden = item.output === null;
      output.textContent = item.output ?? "";
    },
  };
}

const DECIDED: Record<Decision, string> = { approve: "Approved", deny: "Denied", always: "Always allowed" };

function approvalView(actions: ItemActions): ItemView {
  const tool = h("code");
  const args = h("pre", { class: "code", tabindex: 0, "aria-label": "Arguments" });
  const destination = h("div", { class: "approval-destination", hidden: true });
  const diff = h("div", { class: "approval-diff", hidden: true });
  const error = h("p", { class: "approval-error", role: "alert" });
  const actionsBox = h("div", { class: "actions" });
  const title = h("h2", { class: "approval-title", tabindex: -1 }, h("span", { class: "approval-icon", "aria-hidden": "true" }), h("span", { class: "approval-heading" }));
  const el = h("section", { class: "approval" }, title, h("p", null, "The agent wants to run ", tool, " with:"), args, destination, diff, actionsBox, error);
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"approval">;
      const id = `approval-${item.callId}`;
      title.id = `${id}-title`;
      el.setAttribute("aria-labelledby", title.id);
      el.dataset.callId = item.callId;
      (title.lastElementChild as HTMLElement).textContent = item.decided ? "Approval" : "Approval needed";
      tool.textContent = item.tool;
      args.textContent = prettyJson(item.arguments) || "(no arguments)";
      fill(
        destination,
        item.destination ? h("p", null, h("strong", { text: "Where the data would go: " }), h("code", { text: item.destination })) : null,
        item.destination ? h("p", { class: "small", text: "This call could carry data out of this machine, and this turn has read content from outside (a web page, a tool's result)." }) : null,
      );
      destination.hidden = !item.destination;
      fill(diff, item.diff ? h("div", { class: "label", text: "The change" }) : null, item.diff ? diffView(item.diff) : null);
      diff.hidden = !item.diff;
      error.textContent = item.error ?? "";
      error.hidden = !item.error;
      el.dataset.state = item.decided ?? "pending";
      if (item.decided) {
        fill(actionsBox, h("span", { class: `decided ${item.decided}`, text: DECIDED[item.decided] }));
        return;
      }
      const button = (decision: Decision, label: string, cls: string) =>
        h("button", { type: "button", class: cls, text: label, disabled: item.busy, onclick: () => actions.decide(item.threadId, item.callId, decision) });
      fill(actionsBox, button("approve", "Approve", "primary"), button("deny", "Deny", "danger"), button("always", "Always allow", "secondary"));
    },
  };
}

/** A unified diff with its added and removed lines marked (by colour and by their + and -), scrollable. */
export function diffView(diff: string): HTMLElement {
  const lines = diff.replace(/\n$/, "").split("\n");
  const kind = (line: string) =>
    line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "same";
  return h(
    "pre",
    { class: "code diff", tabindex: 0, "aria-label": "Changes: lines starting with + are added, with - removed", dir: "ltr" },
    ...lines.map((line) => h("span", { class: `diff-${kind(line)}`, text: `${line}\n` })),
  );
}

/** Only http(s) links, on this origin or another: never javascript: or data:. */
function safeUrl(url: string): string | null {
  try {
    const u = new URL(url, location.origin);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

function connectView(): ItemView {
  const tool = h("code");
  const extension = h("strong");
  const action = h("div", { class: "actions" });
  const el = h(
    "section",
    { class: "approval connect", "aria-label": "Connection needed" },
    h("div", { class: "approval-title" }, h("span", { class: "approval-icon", "aria-hidden": "true" }), "Connection needed"),
    h("p", null, "To run ", tool, " the agent needs access to ", extension, ". Connect it, and the turn goes on by itself."),
    action,
  );
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"connect">;
      tool.textContent = item.tool;
      extension.textContent = item.extension;
      const href = safeUrl(item.url);
      fill(
        action,
        href
          ? h("a", { class: "button primary", href, target: "_blank", rel: "noopener noreferrer", text: `Connect ${item.extension}` })
          : h("span", { class: "muted small", text: "Connect it from the extensions page." }),
      );
    },
  };
}

function noticeView(actions: ItemActions): ItemView {
  const text = h("span");
  const el = h("div", { class: "notice" }, text);
  return {
    el,
    update(raw, place) {
      const item = raw as ItemOf<"notice">;
      el.className = `notice ${item.tone}`;
      el.setAttribute("role", item.tone === "error" ? "alert" : "status");
      text.textContent = item.text;
      el.querySelector(".retry")?.remove();
      if (place.lastEnding && place.idle) el.append(h("button", { type: "button", class: "secondary retry", text: "Retry", onclick: () => actions.regenerate() }));
    },
  };
}
