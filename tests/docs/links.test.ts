// The manual's links hold: every relative link and #anchor in README.md and docs/*.md names a
// file that exists and, for an anchor, a heading of that page; every page of docs/ is linked
// from the README.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { marked, type Token } from "marked";
import { root } from "../support/binary";

const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** Every token of a Markdown text, nested ones included (links sit inside paragraphs, lists, tables). */
function tokens(markdown: string): Token[] {
  const all: Token[] = [];
  marked.walkTokens(marked.lexer(markdown), (t) => {
    all.push(t);
  });
  return all;
}

/** The text a heading shows, without its Markdown. */
function shown(t: Token): string {
  const inner = (t as { tokens?: Token[] }).tokens;
  return inner ? inner.map(shown).join("") : ((t as { text?: string }).text ?? "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; a repeated one gets -1, -2… */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const t of tokens(markdown).filter((t) => t.type === "heading")) {
    const slug = shown(t)
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

/** Every relative link of a page, as written: `docs/x.md#y`, `#y`, `screenshots/a.png`. */
function links(markdown: string): string[] {
  return tokens(markdown)
    .filter((t): t is Token & { href: string } => (t.type === "link" || t.type === "image") && "href" in t)
    .map((t) => t.href)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href));
}

/** What is wrong with one link of `page`, or null. */
function broken(page: string, href: string): string | null {
  const [path, anchor] = href.split("#") as [string, string | undefined];
  const target = path ? resolve(dirname(join(root, page)), decodeURIComponent(path)) : join(root, page);
  if (!existsSync(target)) return `${page}: ${href}: no file ${relative(root, target)}`;
  if (anchor === undefined) return null;
  if (!target.endsWith(".md")) return `${page}: ${href}: an anchor into a file that is not Markdown`;
  return anchors(readFileSync(target, "utf8")).has(anchor) ? null : `${page}: ${href}: no heading #${anchor} in ${relative(root, target)}`;
}

test("every relative link and anchor of README.md and docs/*.md resolves", () => {
  const checked = pages.flatMap((page) => links(readFileSync(join(root, page), "utf8")).map((href) => [page, href] as const));
  expect(checked.length).toBeGreaterThan(100);
  expect(checked.map(([page, href]) => broken(page, href)).filter(Boolean)).toEqual([]);
});

test("the check has teeth: a missing file, a missing heading and a heading's repeat are told apart", () => {
  expect(broken("README.md", "docs/nowhere.md")).toContain("no file docs/nowhere.md");
  expect(broken("README.md", "docs/operations.md#nowhere")).toContain("no heading #nowhere");
  expect(broken("README.md", "docs/operations.md#postgresql")).toBeNull();
  expect(broken("docs/performance.md", "#long-threads")).toBeNull();
  expect(anchors("## A `b` c, d!\n\n## A `b` c, d!\n")).toEqual(new Set(["a-b-c-d", "a-b-c-d-1"]));
});

test("the README links every page of docs/", () => {
  const linked = new Set(links(readFileSync(join(root, "README.md"), "utf8")).map((href) => href.split("#")[0]));
  expect(pages.filter((p) => p !== "README.md" && !linked.has(p))).toEqual([]);
});
