// HTML as readable text for the model: what a reader would not see dropped first
// (html-hidden.ts), then headings, paragraphs, lists, tables and links kept, scripts, styles,
// navigation and the head dropped, entities decoded (html-to-text).
import serialize from "dom-serializer";
import { parseDocument } from "htmlparser2";
import { compile, type FormatCallback } from "html-to-text";
import { dropHidden } from "./html-hidden";

type Metadata = { baseUrl: string };

/** `## Heading` lines, so the model still sees the document's structure. */
const markdownHeading: FormatCallback = (elem, walk, builder) => {
  const level = Number(/^h([1-6])$/.exec(elem.name ?? "")?.[1] ?? 2);
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addInline(`${"#".repeat(level)} `);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

/** Links relative to the page become absolute; script links are dropped. */
function absoluteHref(href: string, metadata: Metadata): string {
  if (/^\s*(javascript|data|vbscript):/i.test(href)) return "";
  try {
    return new URL(href, metadata.baseUrl).href;
  } catch {
    return href;
  }
}

const SKIPPED = ["head", "script", "style", "noscript", "template", "nav", "svg", "canvas", "iframe", "object", "img", "button", "select", "input"];

const render = compile({
  wordwrap: false,
  formatters: { markdownHeading },
  selectors: [
    ...SKIPPED.map((selector) => ({ selector, format: "skip" })),
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, format: "markdownHeading" })),
    {
      selector: "a",
      options: {
        hideLinkHrefIfSameAsText: true,
        noAnchorUrl: true,
        pathRewrite: absoluteHref as (path: string, meta: unknown) => string,
      },
    },
    { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false } },
  ],
}) as unknown as (html: string, metadata: Metadata) => string;

const TITLE = /<title[^>]*>([\s\S]*?)<\/title\s*>/i;

/** The page's title (if any) and its readable text. */
export function htmlToText(html: string, baseUrl: string): { title?: string; text: string } {
  const rawTitle = TITLE.exec(html)?.[1];
  const title = rawTitle ? render(`<p>${rawTitle}</p>`, { baseUrl }).trim() : undefined;
  const page = parseDocument(html);
  dropHidden(page);
  const text = render(serialize(page, { encodeEntities: "utf8" }), { baseUrl })
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title: title || undefined, text };
}
