// Code in model answers: syntax colours (highlight.js with the languages people paste most,
// bundled: nothing is fetched at run time), a language label and a Copy button.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { copyText } from "./clipboard";
import { h } from "./dom";

const LANGUAGES = { bash, c, cpp, css, diff, dockerfile, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** A fence's language as written (`ts`, `sh`, `toml`), when it is one highlight.js knows here. */
export function knownLanguage(lang: string | undefined): string | undefined {
  const name = lang?.trim().split(/\s/)[0]?.toLowerCase();
  return name && hljs.getLanguage(name) ? name : undefined;
}

/** The code as highlighted HTML (highlight.js escapes the text), or undefined for a language it does not know. */
export function highlight(code: string, lang: string | undefined): string | undefined {
  const language = knownLanguage(lang);
  return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : undefined;
}

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
