import { Lexer, type Token } from "marked";

/**
 * A thread's title: the first words of a user's message as a person reads them, without the
 * instruction and context blocks in front of it and without its Markdown (`**`, `#`, fences,
 * link targets). Undefined when nothing is left.
 */
export function threadTitle(text: string | undefined): string | undefined {
  const source = text?.replace(/<(instructions|user-context)>[\s\S]*?<\/\1>/g, "");
  const words = source === undefined ? undefined : (PLAIN.test(source) && !LIST_MARK.test(source) ? source : plainText(Lexer.lex(source))).replace(/\s+/g, " ").trim();
  return words ? words.slice(0, 80) : undefined;
}

/** One line of words and punctuation Markdown does nothing with: its own title, not lexed. */
const PLAIN = /^[\p{L}\p{N} ,.;:?'"()/]*$/u;
/** ... unless it starts like an ordered list item ("1. Buy milk"). */
const LIST_MARK = /^ *\d+[.)]/;

const BLOCKS = new Set(["paragraph", "heading", "code", "blockquote", "list", "list_item", "table", "space", "hr"]);

/** The words of Markdown tokens: their text, without the marks around it. */
function plainText(tokens: Token[]): string {
  return tokens
    .map((t) => {
      let text = "";
      if (t.type === "list") text = t.items.map((i: Token) => plainText([i])).join(" ");
      else if (t.type === "table") text = [t.header, ...t.rows].flat().map((c: { tokens: Token[] }) => plainText(c.tokens)).join(" ");
      else if ("tokens" in t && t.tokens?.length) text = plainText(t.tokens);
      else if (t.type === "image") text = t.text;
      else if ("text" in t && typeof t.text === "string") text = t.text;
      return BLOCKS.has(t.type) ? ` ${text} ` : text;
    })
    .join("");
}
