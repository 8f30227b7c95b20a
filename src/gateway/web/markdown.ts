import DOMPurify from "dompurify";
import { Marked } from "marked";
import { highlight, knownLanguage } from "./code";

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
