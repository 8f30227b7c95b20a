/**
 * Leak protection: credentials of well-known formats and the service's own secrets are
 * replaced by `[REDACTED:<kind>]`.
 *
 * Linear time by construction: one regex of fixed literal anchors finds where a secret may
 * start, and a hand-written loop with a bounded length reads the rest. Nothing backtracks
 * over more than a rule's maximum length, and every rule knows whether what it saw could
 * still grow, which is what the streaming redactor needs to hold back no more than that.
 */

import { anyCase, escapeRegex, exactRules, isAlnum, RULES, type Rule } from "./rules";

export interface StreamRedactor {
  /** Takes the next piece of text; returns what is safe to emit now. */
  push(delta: string): string;
  /** Returns everything still held back, redacted. */
  flush(): string;
}

export interface Redactor {
  redact(text: string): string;
  stream(): StreamRedactor;
}

/** A scanner over a set of rules: finds anchors with one regex of literals, then asks the rule. */
class Scanner {
  readonly #anchorRe: RegExp;
  readonly #byAnchor = new Map<string, Rule>();
  readonly #byAnchorCi = new Map<string, Rule>();
  readonly #anchors: { text: string; rule: Rule }[] = [];
  readonly #byFirstChar = new Map<number, { text: string; rule: Rule }[]>();
  readonly #longestAnchor: number;
  /** Text a scan can keep back: the longest span any rule can match. */
  readonly maxHold: number;

  constructor(rules: Rule[]) {
    for (const rule of rules) {
      for (const a of rule.anchors) {
        const key = rule.ci ? a.toLowerCase() : a;
        const map = rule.ci ? this.#byAnchorCi : this.#byAnchor;
        if (map.has(key)) continue;
        map.set(key, rule);
        this.#anchors.push({ text: key, rule });
      }
    }
    // longest first: at one position the longer anchor ("sk-ant-") wins over its prefix ("sk-")
    this.#anchors.sort((x, y) => y.text.length - x.text.length);
    const source = this.#anchors.map(({ text, rule }) => (rule.ci ? anyCase(text) : escapeRegex(text))).join("|");
    this.#anchorRe = new RegExp(source || "(?!)", "g");
    this.maxHold = Math.max(1, ...rules.map((r) => r.maxLength));
    this.#longestAnchor = Math.max(0, ...this.#anchors.map((a) => a.text.length));
    for (const a of this.#anchors) {
      // case-sensitive anchors are filed under their first character folded; matchesAt checks case
      const first = fold(a.text.charCodeAt(0));
      this.#byFirstChar.set(first, [...(this.#byFirstChar.get(first) ?? []), a]);
    }
  }

  /**
   * Redacts `text` from `start` on (what comes before is only context for boundaries). When
   * not final, stops where a secret may be starting that more text would complete, and says
   * where: everything from `cut` on is not in `out`.
   */
  scan(text: string, start: number, final: boolean): { out: string; cut: number } {
    const partials = final ? [] : this.#partialAnchors(text, start);
    const re = this.#anchorRe;
    re.lastIndex = start;
    let pos = start;
    let out = "";
    let p = 0;
    for (;;) {
      const searchFrom = re.lastIndex;
      while (p < partials.length && partials[p]! < searchFrom) p++;
      const m = re.exec(text);
      const at = m ? m.index : Infinity;
      const partial = partials[p] ?? Infinity;
      if (partial <= at && partial !== Infinity) return { out: out + text.slice(pos, partial), cut: partial };
      if (!m) break;
      const rule = this.#byAnchor.get(m[0]) ?? this.#byAnchorCi.get(m[0].toLowerCase())!;
      if (rule.boundary && at > 0 && isAlnum(text.charCodeAt(at - 1))) {
        re.lastIndex = at + 1;
        continue;
      }
      const r = rule.read(text, at, m[0].length, final);
      if (r.t === "open") return { out: out + text.slice(pos, at), cut: at };
      if (r.t === "none") {
        re.lastIndex = at + 1;
      } else if (r.t === "skip") {
        re.lastIndex = r.end;
      } else {
        out += text.slice(pos, r.start) + `[REDACTED:${rule.kind}]`;
        pos = r.end;
        re.lastIndex = r.end;
      }
    }
    return { out: out + text.slice(pos), cut: text.length };
  }

  /** Positions (ascending, ≥ start) where the text ends with a proper prefix of an anchor. */
  #partialAnchors(text: string, start: number): number[] {
    const found: number[] = [];
    const n = text.length;
    for (let at = Math.max(start, n - this.#longestAnchor + 1); at < n; at++) {
      const candidates = this.#byFirstChar.get(fold(text.charCodeAt(at)));
      if (!candidates) continue;
      const k = n - at;
      for (const { text: anchor, rule } of candidates) {
        if (anchor.length <= k || !matchesAt(text, at, anchor, k, rule.ci ?? false)) continue;
        if (rule.boundary && at > 0 && isAlnum(text.charCodeAt(at - 1))) continue;
        found.push(at);
        break;
      }
    }
    return found;
  }
}

const fold = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

function matchesAt(text: string, at: number, anchor: string, k: number, ci: boolean): boolean {
  for (let i = 0; i < k; i++) {
    let c = text.charCodeAt(at + i);
    if (ci && c >= 65 && c <= 90) c += 32;
    if (c !== anchor.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Streams text through a scanner, holding back only what may be the start of a secret. The
 * last emitted character is kept as context so boundaries read the same as on whole text.
 */
function streamThrough(scanner: Scanner): StreamRedactor {
  let context = "";
  let held = "";
  /** Size of `held` when it was last scanned and found open (0: scan on every push). */
  let scannedAt = 0;
  const keepFrom = (cut: number) => {
    if (cut > 0) context = held[cut - 1]!;
    held = held.slice(cut);
  };
  return {
    push(delta) {
      if (!delta) return "";
      held += delta;
      // a long open candidate (a PEM block arriving in small pieces) is rescanned only after it
      // has grown by a quarter, so the work stays linear; it is still held, never emitted early
      if (scannedAt > 256 && held.length - scannedAt < scannedAt / 4 && held.length <= scanner.maxHold) return "";
      const text = context + held;
      const { out, cut } = scanner.scan(text, context.length, false);
      keepFrom(cut - context.length);
      scannedAt = held.length > 256 ? held.length : 0;
      return out;
    },
    flush() {
      const text = context + held;
      const { out } = scanner.scan(text, context.length, true);
      context = "";
      held = "";
      scannedAt = 0;
      return out;
    },
  };
}

/**
 * A redactor for these secrets (exact strings) and every known credential format. Exact
 * secrets are replaced first, in a pass of their own, so a secret that happens to contain
 * the start of a credential format still goes whole.
 */
export function createRedactor(secrets: string[] = []): Redactor {
  const own = new Scanner(exactRules(secrets.filter((s) => s.length > 0)));
  const formats = new Scanner(RULES);
  return {
    redact: (text) => formats.scan(own.scan(text, 0, true).out, 0, true).out,
    stream() {
      const first = streamThrough(own);
      const second = streamThrough(formats);
      return {
        push: (delta) => second.push(first.push(delta)),
        flush: () => second.push(first.flush()) + second.flush(),
      };
    },
  };
}
