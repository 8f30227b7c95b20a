// Rendered Markdown in the page, finished: a head with the language and a Copy button on each
// code block, sideways scrolling for wide code and tables, and each paragraph's direction.
import { copyText } from "./clipboard";
import { h } from "./dom";

/**
 * Finishes rendered Markdown: each code block gets a head with its language and a Copy
 * button, code and tables scroll sideways (and by keyboard) when wider than the screen, and
 * each paragraph takes the direction of its own text (an Arabic line in an English answer
 * reads right to left). What was done before is left alone.
 */
export function decorateMarkdown(root: HTMLElement, announce: (message: string) => void): void {
  for (const block of root.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, blockquote, th, td")) block.setAttribute("dir", "auto");
  for (const pre of root.querySelectorAll<HTMLPreElement>("pre:not([data-decorated])")) {
    pre.dataset.decorated = "";
    pre.tabIndex = 0;
    const code = pre.querySelector("code");
    const lang = code?.dataset.lang ?? "";
    pre.setAttribute("aria-label", lang ? `Code, ${lang}` : "Code");
    const copy = h("button", { type: "button", class: "ghost copy", text: "Copy", "aria-label": lang ? `Copy ${lang} code` : "Copy code" });
    copy.addEventListener("click", async () => {
      const ok = await copyText(code?.textContent ?? pre.textContent ?? "");
      copy.textContent = ok ? "Copied" : "Copy failed";
      announce(ok ? "Code copied." : "The code could not be copied.");
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    });
    const head = h("div", { class: "code-head" }, h("span", { class: "code-lang", text: lang || "text" }), copy);
    const block = h("div", { class: "code-block" });
    pre.replaceWith(block);
    block.append(head, pre);
  }
  for (const table of root.querySelectorAll<HTMLTableElement>("table:not([data-decorated])")) {
    table.dataset.decorated = "";
    const scroller = h("div", { class: "table-scroll", tabindex: 0, role: "region", "aria-label": "Table" });
    table.replaceWith(scroller);
    scroller.append(table);
  }
}
