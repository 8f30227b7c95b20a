import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import clang from "highlight.js/lib/languages/c";
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
import { Marked } from "marked";

// Syntax colours for code in answers: highlight.js with the languages people paste most,
// bundled (nothing is fetched at run time).
const LANGUAGES = { bash, c: clang, cpp, css, diff, dockerfile, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** A fence's language as written (`ts`, `sh`, `toml`), when it is one highlight.js knows here. */
function knownLanguage(lang: string | undefined): string | undefined {
  const name = lang?.trim().split(/\s/)[0]?.toLowerCase();
  return name && hljs.getLanguage(name) ? name : undefined;
}

/** The code as highlighted HTML (highlight.js escapes the text), or undefined for a language it does not know. */
function highlight(code: string, lang: string | undefined): string | undefined {
  const language = knownLanguage(lang);
  return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : undefined;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * Markdown for model output and memory documents. Raw HTML in the source is shown as text,
 * not interpreted; images become links (a remote image would be fetched, and could carry
 * data out); then DOMPurify cleans the result as a second line of defence.
 */
const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html({ text, block }) {
      return block ? `<p class="raw">${escapeHtml(text)}</p>` : escapeHtml(text);
    },
    code({ text, lang }) {
      const language = knownLanguage(lang);
      const label = lang?.trim().split(/\s/)[0]?.replace(/[^\w+#.-]/g, "") ?? "";
      const body = highlight(text, language) ?? escapeHtml(text);
      return `<pre><code class="hljs${language ? ` language-${language}` : ""}"${label ? ` data-lang="${escapeHtml(label)}"` : ""}>${body}</code></pre>\n`;
    },
    image({ href, title, text }) {
      const label = escapeHtml(text || href);
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ""}>${label}</a>`;
    },
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

const PURIFY = {
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "img", "video", "audio", "iframe", "svg", "math"],
  FORBID_ATTR: ["style"],
};

/** Markdown to sanitised HTML, safe to assign to innerHTML. */
export function renderMarkdown(source: string): string {
  return DOMPurify.sanitize(marked.parse(source) as string, PURIFY);
}

export { escapeHtml };
