// HTML as text for the model, on its own: what the hidden-text pass keeps and drops at the edges.
import { describe, expect, test } from "bun:test";
import { parseStyle } from "../../src/tools/builtin/html-hidden";
import { htmlToText } from "../../src/tools/builtin/html-text";

describe("htmlToText", () => {
  test("a page nested far too deep is read down to a limit instead of failing", () => {
    const html = `<p>top text</p>${"<div>".repeat(50_000)}deep text${"</div>".repeat(50_000)}`;
    const { text } = htmlToText(html, "http://example.test/");
    expect(text).toContain("top text");
    expect(text).not.toContain("deep text");
  });

  test("entities and markup in text survive the hidden-text pass as text", () => {
    const { text } = htmlToText("<p>a &lt;b&gt; &amp; &quot;q&quot; caf&eacute; &#x263A;</p><p hidden>x</p>", "http://example.test/");
    expect(text).toBe('a <b> & "q" café ☺');
  });
});

describe("parseStyle reads an inline style as a browser does", () => {
  test.each<[string, Record<string, string>]>([
    ["display:none", { display: "none" }],
    ["Display : NONE !important", { display: "none" }],
    ["junk; display:none", { display: "none" }],
    ["display:block; display:none", { display: "none" }],
    ["/* display:block */ display:none", { display: "none" }],
    ["background:url('a;b.png'); color: red", { background: "url('a;b.png')", color: "red" }],
    ['content:"x;y";opacity:0', { content: '"x;y"', opacity: "0" }],
    ["", {}],
    [":;;", {}],
  ])("%p", (style, want) => {
    expect(Object.fromEntries(parseStyle(style))).toEqual(want);
  });
});
