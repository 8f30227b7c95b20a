// What a reader of a page does not see is dropped before the model reads it: a page can hide
// instructions for the model in text no person would notice. Judged from the markup itself:
// the `hidden` and `aria-hidden` attributes, `<template>`, closed `<dialog>`, comments, and
// inline styles (display, visibility, opacity, zero or tiny font size, zero size with overflow
// hidden, clipping, scale(0), off-screen positions, text in the background's colour).
// Stylesheets and scripts are not evaluated: a class can still hide text (docs/safety.md, Security).
import { colord, extend, type Colord } from "colord";
import a11y from "colord/plugins/a11y";
import names from "colord/plugins/names";
import { type ChildNode, type Document, type Element, isTag, isText } from "domhandler";

extend([names, a11y]);

/** What an element hands down to its children. */
interface Inherited {
  /** `visibility: hidden` (a child may set `visible` again). */
  invisible: boolean;
  /** The font size is zero or too small to read. */
  tiny: boolean;
  /** The text colour, when one was set. */
  color?: Colord;
  /** The nearest background colour (white, a browser's default, until one is set). */
  background: Colord;
  /** The text colour cannot be told from the background, or is transparent. */
  faint: boolean;
}

/** Elements whose content is never shown as it stands. */
const NEVER_SHOWN = new Set(["template", "script", "style", "noscript"]);
/** Below this contrast ratio with its background, text cannot be told from it (1 is the same colour). */
const MIN_CONTRAST = 1.1;
/** Below this opacity or alpha, an element or a colour is as good as invisible. */
const MIN_OPACITY = 0.1;
/** Font sizes below this many pixels cannot be read. */
const MIN_FONT_PX = 2;
/** An offset beyond this many pixels puts an element off the page. */
const OFF_SCREEN_PX = 500;

/** Elements nested deeper than this are dropped: no page needs them, and they would overflow the stack of what renders the page. */
export const MAX_DEPTH = 512;

/** Removes from the document every element and text node a reader of the page would not see. */
export function dropHidden(doc: Document): void {
  const doomed: ChildNode[] = [];
  // an explicit stack: pages nest deeper than the call stack allows
  const stack: [ChildNode, Inherited, number][] = doc.children.map((n) => [n, { invisible: false, tiny: false, background: colord("#fff"), faint: false }, 0]);
  while (stack.length) {
    const [node, inherited, depth] = stack.pop()!;
    if (depth > MAX_DEPTH) {
      doomed.push(node);
      continue;
    }
    if (isText(node)) {
      if (node.data.trim() && unseenText(inherited)) doomed.push(node);
      continue;
    }
    if (!isTag(node)) {
      // comments, CDATA, processing instructions; the doctype stays
      if (node.type !== "directive") doomed.push(node);
      continue;
    }
    const state = elementState(node, inherited);
    if (!state) {
      doomed.push(node);
      continue;
    }
    for (const child of node.children) stack.push([child, state, depth + 1]);
  }
  for (const node of doomed) {
    const siblings = node.parent?.children;
    if (siblings) siblings.splice(siblings.indexOf(node), 1);
  }
}

const unseenText = (s: Inherited) => s.invisible || s.tiny || s.faint;

const faint = (s: Inherited) => !!s.color && (s.color.alpha() < MIN_OPACITY || s.color.contrast(s.background) < MIN_CONTRAST);

/** What the element hands down, or null when it is not shown at all. */
function elementState(el: Element, inherited: Inherited): Inherited | null {
  const name = el.name.toLowerCase();
  const attrs = el.attribs;
  if (NEVER_SHOWN.has(name) || (name === "dialog" && !("open" in attrs))) return null;
  if ("hidden" in attrs || attrs["aria-hidden"]?.trim().toLowerCase() === "true") return null;
  const style = parseStyle(attrs.style ?? "");
  const get = (p: string) => style.get(p) ?? "";
  if (style.size && hiddenByStyle(get)) return null;

  const state = { ...inherited };
  if (name === "font" && attrs.color) state.color = colour(attrs.color) ?? state.color;
  if (attrs.bgcolor) state.background = opaque(colour(attrs.bgcolor)) ?? state.background;
  const visibility = get("visibility");
  if (visibility === "hidden" || visibility === "collapse") state.invisible = true;
  else if (visibility === "visible") state.invisible = false;
  if (style.has("font-size")) state.tiny = tinyFont(get("font-size"), inherited.tiny);
  if (style.has("color")) state.color = colour(get("color")) ?? state.color;
  const background = get("background-color") || get("background");
  if (background) state.background = opaque(background.split(/\s+(?![^(]*\))/).map(colour).find((c) => c)) ?? state.background;
  if (state.color !== inherited.color || state.background !== inherited.background) state.faint = faint(state);
  return state;
}

/** Whether the inline style takes the element and all it holds out of sight. */
function hiddenByStyle(get: (property: string) => string): boolean {
  if (get("display") === "none" || get("content-visibility") === "hidden") return true;
  const opacity = number(get("opacity"));
  if (opacity !== undefined && opacity < MIN_OPACITY) return true;
  if (/^(hidden|clip)$/.test(get("overflow") || get("overflow-x") || get("overflow-y"))) {
    if (["width", "height", "max-width", "max-height"].some((p) => (pixels(get(p)) ?? 2) <= 1)) return true;
  }
  const clip = get("clip");
  if (clip.startsWith("rect(") && (clip.match(/-?\d*\.?\d+/g) ?? []).every((n) => Math.abs(Number(n)) <= 1)) return true;
  if (/inset\(\s*(5\d|[6-9]\d|100)%|circle\(\s*0/.test(get("clip-path"))) return true;
  if (/scale[xy]?\(\s*0*\.?0*\s*[,)]|matrix\(\s*0\s*,\s*0\s*,\s*0\s*,\s*0\s*,/.test(get("transform"))) return true;
  if ((pixels(get("text-indent")) ?? 0) <= -OFF_SCREEN_PX) return true;
  return /^(absolute|fixed)$/.test(get("position")) && ["left", "top"].some((p) => (pixels(get(p)) ?? 0) <= -OFF_SCREEN_PX);
}

/**
 * An inline style's declarations, lower-cased, `!important` dropped, the last one of a
 * property winning, as a browser reads them: a malformed declaration is skipped, not fatal.
 */
export function parseStyle(style: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!style) return out;
  // semicolons inside quotes or parentheses (url(...)) do not end a declaration
  for (const decl of style.replace(/\/\*[\s\S]*?\*\//g, "").match(/(?:"[^"]*"|'[^']*'|\([^)]*\)|[^;"'(])+/g) ?? []) {
    const colon = decl.indexOf(":");
    if (colon < 0) continue;
    const property = decl.slice(0, colon).trim().toLowerCase();
    const value = decl
      .slice(colon + 1)
      .replace(/!\s*important\s*$/i, "")
      .trim()
      .toLowerCase();
    if (/^-?[a-z-]+$/.test(property) && value) out.set(property, value);
  }
  return out;
}

/** A CSS colour, or undefined (cached: a page repeats its colours). */
const colours = new Map<string, Colord | undefined>();
function colour(text: string): Colord | undefined {
  let c = colours.get(text);
  if (c === undefined && !colours.has(text)) {
    const parsed = colord(text.trim());
    c = parsed.isValid() ? parsed : undefined;
    if (colours.size < 4096) colours.set(text, c);
  }
  return c;
}

/** A background colour that hides what is behind it. */
const opaque = (c: Colord | undefined) => (c && c.alpha() >= 0.5 ? c : undefined);

/** A plain number, or a percentage as a fraction: `0`, `0.05`, `5%`. */
function number(value: string): number | undefined {
  const m = /^(-?\d*\.?\d+)(%?)$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) / (m[2] ? 100 : 1);
}

const PX_PER: Record<string, number> = { px: 1, pt: 4 / 3, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6, rem: 16 };

/** An absolute length in pixels (`0` alone counts); undefined for anything relative or unknown. */
function pixels(value: string): number | undefined {
  const m = /^(-?\d*\.?\d+)([a-z]*)$/.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!m[2]) return n === 0 ? 0 : undefined;
  const per = PX_PER[m[2]];
  return per === undefined ? undefined : n * per;
}

/** Whether text at this font size can be read; relative sizes scale the parent's. */
function tinyFont(value: string, parentTiny: boolean): boolean {
  const px = pixels(value);
  if (px !== undefined) return px < MIN_FONT_PX;
  const m = /^(\d*\.?\d+)(em|%|ex|ch)$/.exec(value);
  if (m) return parentTiny || Number(m[1]) / (m[2] === "%" ? 100 : 1) < 0.125;
  // keywords (small, larger...), vw, calc(): not judged
  return value === "smaller" || value === "larger" ? parentTiny : false;
}
