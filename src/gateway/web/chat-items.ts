import type { ItemOf, ViewItem } from "../client/conversation";
import { fill, h, prettyJson } from "./dom";
import { renderMarkdown } from "./markdown";
import type { Decision } from "./wire";

export interface ItemView {
  el: HTMLElement;
  update(item: ViewItem): void;
}

export type Decide = (threadId: string, callId: string, decision: Decision) => void;

/** Shown under an answer that was stored cut short. */
const CUT_SHORT = "This answer was cut short.";

/** The element for one conversation item; `update` changes it in place as the item grows. */
export function itemView(item: ViewItem, decide: Decide): ItemView {
  switch (item.kind) {
    case "user":
      return userView();
    case "assistant":
      return assistantView();
    case "tool":
      return toolView();
    case "approval":
      return approvalView(decide);
    case "connect":
      return connectView();
    case "notice":
      return noticeView();
    case "compaction":
      return compactionView();
    case "reasoning":
      return reasoningView();
  }
}

/** The model's reasoning, collapsed: a person opens it if they want to see how it got there. */
function reasoningView(): ItemView {
  const label = h("span", { class: "thinking-label" });
  const body = h("div", { class: "thinking-text" });
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
  const body = h("div", { class: "compaction-summary" });
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

function userView(): ItemView {
  const bubble = h("div", { class: "bubble" });
  const el = h("div", { class: "msg user" }, h("span", { class: "sr-only", text: "You: " }), bubble);
  return {
    el,
    update(item) {
      bubble.textContent = (item as ItemOf<"user">).text;
    },
  };
}

function assistantView(): ItemView {
  const body = h("div", { class: "md" });
  const cutShort = h("p", { class: "notice info", role: "status", text: CUT_SHORT, hidden: true });
  const el = h("div", { class: "msg assistant" }, body, cutShort);
  let shown: string | null = null;
  let frame = 0;
  let latest = "";
  const paint = () => {
    frame = 0;
    if (latest === shown) return;
    shown = latest;
    body.innerHTML = renderMarkdown(latest);
  };
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"assistant">;
      el.classList.toggle("streaming", item.streaming);
      el.setAttribute("aria-busy", String(item.streaming));
      latest = item.text;
      cutShort.hidden = !item.cutShort;
      // many deltas a second: render at most once per frame while streaming
      if (!item.streaming) paint();
      else if (!frame) frame = requestAnimationFrame(paint);
    },
  };
}

function toolView(): ItemView {
  const name = h("span", { class: "tool-name" });
  const status = h("span", { class: "tool-status" });
  const args = h("pre", { class: "code" });
  const output = h("pre", { class: "code" });
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
      const state = item.output === null ? "running" : item.isError ? "error" : "done";
      el.dataset.state = state;
      status.textContent = state === "running" ? "running…" : state === "error" ? "failed" : "done";
      args.textContent = prettyJson(item.arguments);
      resultBlock.hidden = item.output === null;
      output.textContent = item.output ?? "";
    },
  };
}

const DECIDED: Record<Decision, string> = { approve: "Approved", deny: "Denied", always: "Always allowed" };

function approvalView(decide: Decide): ItemView {
  const tool = h("code");
  const args = h("pre", { class: "code" });
  const error = h("p", { class: "approval-error", role: "alert" });
  const actions = h("div", { class: "actions" });
  const el = h(
    "section",
    { class: "approval", "aria-label": "Approval needed" },
    h("div", { class: "approval-title" }, h("span", { class: "approval-icon", "aria-hidden": "true" }), "Approval needed"),
    h("p", null, "The agent wants to run ", tool, " with:"),
    args,
    actions,
    error,
  );
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"approval">;
      tool.textContent = item.tool;
      args.textContent = prettyJson(item.arguments) || "(no arguments)";
      error.textContent = item.error ?? "";
      error.hidden = !item.error;
      el.dataset.state = item.decided ?? "pending";
      if (item.decided) {
        fill(actions, h("span", { class: `decided ${item.decided}`, text: DECIDED[item.decided] }));
        return;
      }
      const button = (decision: Decision, label: string, cls: string) =>
        h("button", { type: "button", class: cls, text: label, disabled: item.busy, onclick: () => decide(item.threadId, item.callId, decision) });
      fill(actions, button("approve", "Approve", "primary"), button("deny", "Deny", "danger"), button("always", "Always allow", "secondary"));
    },
  };
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

function noticeView(): ItemView {
  const el = h("div", { class: "notice" });
  return {
    el,
    update(raw) {
      const item = raw as ItemOf<"notice">;
      el.className = `notice ${item.tone}`;
      el.setAttribute("role", item.tone === "error" ? "alert" : "status");
      el.textContent = item.text;
    },
  };
}
