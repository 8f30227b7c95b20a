// Markdown for the terminal: the model's answers as blessed-tagged text, read as a person
// reads them: bold and code marked by style instead of ** and backticks, code blocks
// indented under their language, lists with bullets, tables with their columns aligned.
import { Lexer, type Token, type Tokens } from "marked";
import { textWidth } from "./cells";
import { escapeTags } from "./text";

const lexer = () => new Lexer({ gfm: true });

/** Markdown as blessed-tagged text (tags on). */
export function markdownToTags(source: string): string {
  return blocks(lexer().lex(source)).join("\n\n");
}

function blocks(tokens: Token[], indent = ""): string[] {
  return tokens.flatMap((t): string[] => {
    switch (t.type) {
      case "space":
        return [];
      case "paragraph":
        return [indent + inline(t.tokens ?? [])];
      case "text":
        return [indent + ("tokens" in t && t.tokens ? inline(t.tokens) : escapeTags(t.text))];
      case "heading":
        return [`${indent}{bold}${inline(t.tokens ?? [])}{/bold}`];
      case "code":
        return [codeBlock(t as Tokens.Code, indent)];
      case "blockquote":
        return [blocks(t.tokens ?? []).join("\n\n").split("\n").map((l) => `${indent}{gray-fg}│{/gray-fg} ${l}`).join("\n")];
      case "list":
        return [list(t as Tokens.List, indent)];
      case "table":
        return [table(t as Tokens.Table, indent)];
      case "hr":
        return [`${indent}{gray-fg}────────{/gray-fg}`];
      default:
        return "text" in t && typeof t.text === "string" ? [indent + escapeTags(t.text)] : [];
    }
  });
}

function codeBlock(t: Tokens.Code, indent: string): string {
  const lang = t.lang?.trim().split(/\s/)[0];
  const lines = t.text.split("\n").map((l) => `${indent}  {green-fg}${escapeTags(l)}{/green-fg}`);
  return [`${indent}{gray-fg}${escapeTags(lang || "code")}:{/gray-fg}`, ...lines].join("\n");
}

function list(t: Tokens.List, indent: string): string {
  const start = typeof t.start === "number" ? t.start : 1;
  return t.items
    .map((item, i) => {
      const mark = t.ordered ? `${start + i}.` : "•";
      const body = blocks(item.tokens, `${indent}  `).join("\n");
      // the first line carries the mark in place of the indent
      return `${indent}${mark} ${body.slice(indent.length + 2)}`;
    })
    .join("\n");
}

function table(t: Tokens.Table, indent: string): string {
  const rows = [t.header, ...t.rows].map((row) => row.map((cell) => ({ tags: inline(cell.tokens), width: textWidth(plain(cell.tokens)) })));
  const widths = t.header.map((_, c) => Math.max(...rows.map((r) => r[c]?.width ?? 0)));
  const line = (row: { tags: string; width: number }[], bold = false) =>
    indent +
    row
      .map((cell, c) => {
        const pad = " ".repeat(Math.max(0, widths[c]! - cell.width));
        const text = bold ? `{bold}${cell.tags}{/bold}` : cell.tags;
        return t.align[c] === "right" ? pad + text : text + pad;
      })
      .join(" {gray-fg}│{/gray-fg} ");
  const rule = `${indent}{gray-fg}${widths.map((w) => "─".repeat(w)).join("─┼─")}{/gray-fg}`;
  return [line(rows[0]!, true), rule, ...rows.slice(1).map((r) => line(r))].join("\n");
}

function inline(tokens: Token[]): string {
  return tokens
    .map((t) => {
      switch (t.type) {
        case "strong":
          return `{bold}${inline(t.tokens ?? [])}{/bold}`;
        case "em":
          return `{underline}${inline(t.tokens ?? [])}{/underline}`;
        case "codespan":
          return `{cyan-fg}${escapeTags(t.text)}{/cyan-fg}`;
        case "del":
          return inline(t.tokens ?? []);
        case "br":
          return "\n";
        case "link": {
          const text = inline(t.tokens ?? []);
          return plain(t.tokens ?? []) === t.href ? text : `${text} {gray-fg}(${escapeTags(t.href)}){/gray-fg}`;
        }
        case "image":
          return `[image: ${escapeTags(t.text || t.href)}] {gray-fg}(${escapeTags(t.href)}){/gray-fg}`;
        default:
          if ("tokens" in t && t.tokens?.length) return inline(t.tokens);
          return "text" in t && typeof t.text === "string" ? escapeTags(t.text) : "";
      }
    })
    .join("");
}

/** The text of inline tokens, without marks: what a cell shows, for measuring it. */
function plain(tokens: Token[]): string {
  return tokens.map((t) => ("tokens" in t && t.tokens?.length ? plain(t.tokens) : "text" in t && typeof t.text === "string" ? t.text : "")).join("");
}
