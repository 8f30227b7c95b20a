/**
 * Leak protection: credentials of well-known formats and the service's own secrets are
 * replaced by `[REDACTED:<kind>]`.
 *
 * Linear time by construction: one regex of fixed literal anchors finds where a secret may
 * start, and a hand-written loop with a bounded length reads the rest. Nothing backtracks
 * over more than a rule's maximum length, and every rule knows whether what it saw could
 * still grow, which is what the streaming redactor needs to hold back no more than that.
 */

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

/** What a rule found at an anchor. */
type Outcome =
  /** Not a secret; go on looking one character later. */
  | { t: "none" }
  /** Could still become a secret with more text (only when the text is not final). */
  | { t: "open" }
  /** A secret: replace [start, end) by the marker. */
  | { t: "match"; start: number; end: number }
  /** Looked at, not a secret, and nothing inside it is either: resume after `end`. */
  | { t: "skip"; end: number };

interface Rule {
  kind: string;
  /** Literal prefixes; `ci` ones match in any ASCII case. */
  anchors: string[];
  ci?: boolean;
  /** The character before the anchor must not be a letter or digit. */
  boundary?: boolean;
  /** The longest text a match of this rule can span, anchor included (bounds the hold-back). */
  maxLength: number;
  read(text: string, at: number, anchorLength: number, final: boolean): Outcome;
}

const NONE: Outcome = { t: "none" };
const OPEN: Outcome = { t: "open" };

const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpperOrDigit = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
const isHexLower = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
/** base64url and the dashes and underscores API keys use. */
const isKeyChar = (c: number) => isAlnum(c) || c === 45 || c === 95;
const isAlnumUnderscore = (c: number) => isAlnum(c) || c === 95;
const isSlackChar = (c: number) => isAlnum(c) || c === 45;
const isWebhookChar = (c: number) => isAlnum(c) || c === 47 || c === 45 || c === 95;
/** RFC 6750 token68 characters. */
const isTokenChar = (c: number) => isAlnum(c) || c === 45 || c === 46 || c === 95 || c === 126 || c === 43 || c === 47 || c === 61;
const isBase64Char = (c: number) => isAlnum(c) || c === 43 || c === 47 || c === 61;
const isBlank = (c: number) => c === 32 || c === 9;

/** Reads characters of `cls` from `from`, at most `max` of them; returns where the run stopped. */
function run(text: string, from: number, cls: (c: number) => boolean, max: number): number {
  const limit = Math.min(text.length, from + max);
  let i = from;
  while (i < limit && cls(text.charCodeAt(i))) i++;
  return i;
}

/** English words joined by dashes ("sk-learn-is-a-library"): prose, not a key. */
const KEBAB_WORDS = /^[a-z]+(?:-[a-z]+)+$/;

/**
 * A token rule: anchor, then `min` to `max` characters of `cls`. A run that reaches the end
 * of a non-final text is open: it may still grow past `min` (or past a bound the validator
 * cares about). `accept` can reject a candidate that reads like prose.
 */
function tokenRule(o: {
  kind: string;
  anchors: string[];
  cls: (c: number) => boolean;
  min: number;
  max: number;
  boundary?: boolean;
  accept?: (body: string) => boolean;
}): Rule {
  const maxAnchor = Math.max(...o.anchors.map((a) => a.length));
  return {
    kind: o.kind,
    anchors: o.anchors,
    boundary: o.boundary ?? true,
    maxLength: maxAnchor + o.max,
    read(text, at, anchorLength, final) {
      const from = at + anchorLength;
      const end = run(text, from, o.cls, o.max);
      const length = end - from;
      if (end === text.length && length < o.max && !final) return OPEN;
      if (length < o.min) return NONE;
      if (o.accept && !o.accept(text.slice(from, end))) return { t: "skip", end };
      return { t: "match", start: at, end };
    },
  };
}

const OPENAI_SUBPREFIX = /^(?:proj|svcacct|admin)-/;

const RULES: Rule[] = [
  tokenRule({ kind: "anthropic", anchors: ["sk-ant-"], cls: isKeyChar, min: 20, max: 256 }),
  tokenRule({
    kind: "openai",
    anchors: ["sk-"],
    cls: isKeyChar,
    min: 20,
    max: 512,
    accept: (body) => !KEBAB_WORDS.test(body.replace(OPENAI_SUBPREFIX, "")),
  }),
  tokenRule({ kind: "github", anchors: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], cls: isAlnum, min: 30, max: 255 }),
  tokenRule({ kind: "github", anchors: ["github_pat_"], cls: isAlnumUnderscore, min: 22, max: 255 }),
  tokenRule({ kind: "aws_access_key", anchors: ["AKIA", "ASIA"], cls: isUpperOrDigit, min: 16, max: 16 }),
  tokenRule({ kind: "slack", anchors: ["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"], cls: isSlackChar, min: 10, max: 255 }),
  tokenRule({
    kind: "slack_webhook",
    anchors: ["https://hooks.slack.com/", "http://hooks.slack.com/", "hooks.slack.com/"],
    cls: isWebhookChar,
    min: 20,
    max: 255,
  }),
  tokenRule({ kind: "user_token", anchors: ["svc_"], cls: isHexLower, min: 64, max: 64 }),
  bearerRule(),
  awsSecretRule(),
  privateKeyRule(),
];

/** `Bearer <token>`: the token goes, the word stays. */
function bearerRule(): Rule {
  const MAX_GAP = 8;
  const MIN = 16;
  const MAX = 4096;
  return {
    kind: "bearer",
    anchors: ["bearer"],
    ci: true,
    boundary: true,
    maxLength: 6 + MAX_GAP + MAX,
    read(text, at, anchorLength, final) {
      const gapStart = at + anchorLength;
      const from = run(text, gapStart, isBlank, MAX_GAP);
      if (from === text.length && !final && from - gapStart < MAX_GAP) return OPEN;
      if (from === gapStart) return NONE;
      const end = run(text, from, isTokenChar, MAX);
      const length = end - from;
      if (end === text.length && length < MAX && !final) return OPEN;
      if (length < MIN) return NONE;
      if (KEBAB_WORDS.test(text.slice(from, end))) return { t: "skip", end };
      return { t: "match", start: from, end };
    },
  };
}

/** An AWS secret access key (40 base64 characters) where it is labelled as one. */
function awsSecretRule(): Rule {
  const MAX_SEPARATOR = 8;
  const isSeparator = (c: number) => c === 32 || c === 9 || c === 34 || c === 39 || c === 58 || c === 61 || c === 96;
  return {
    kind: "aws_secret_key",
    anchors: ["aws_secret_access_key", "aws_secret_key", "secret_access_key", "secretaccesskey", "aws secret access key"],
    ci: true,
    boundary: false,
    maxLength: 21 + MAX_SEPARATOR + 40,
    read(text, at, anchorLength, final) {
      const sepStart = at + anchorLength;
      const from = run(text, sepStart, isSeparator, MAX_SEPARATOR);
      if (from === text.length && !final && from - sepStart < MAX_SEPARATOR) return OPEN;
      const separator = text.slice(sepStart, from);
      if (!separator.includes("=") && !separator.includes(":")) return NONE;
      const end = run(text, from, isBase64Char, 41);
      if (end === text.length && !final && end - from <= 40) return OPEN;
      if (end - from !== 40) return NONE;
      return { t: "match", start: from, end };
    },
  };
}

/**
 * A PEM private key block, header to footer. A block cut short (no footer) is redacted up to
 * where its body ends, since even part of a key is a leak.
 */
function privateKeyRule(): Rule {
  const MAX_LABEL = 40;
  const MAX_BODY = 20_000;
  const isLabelChar = (c: number) => isUpperOrDigit(c) || c === 32;
  // base64, white space, escaped newlines (JSON), and the Proc-Type/DEK-Info headers of encrypted keys
  const isBodyChar = (c: number) => isBase64Char(c) || c === 32 || c === 9 || c === 10 || c === 13 || c === 92 || c === 58 || c === 44 || c === 45;
  const FOOTER = "-----END ";
  /** Reads `LABEL PRIVATE KEY-----` from `from`; returns its end, -1 if it is something else, -2 if it may still come. */
  const label = (text: string, from: number, final: boolean): number => {
    const end = run(text, from, isLabelChar, MAX_LABEL);
    if (end === text.length && !final) return -2;
    if (!text.slice(from, end).endsWith("PRIVATE KEY")) return -1;
    for (let i = 0; i < 5; i++) {
      if (end + i === text.length) return final ? -1 : -2;
      if (text.charCodeAt(end + i) !== 45) return -1;
    }
    return end + 5;
  };
  return {
    kind: "private_key",
    anchors: ["-----BEGIN "],
    boundary: false,
    maxLength: 11 + MAX_LABEL + 5 + MAX_BODY + FOOTER.length + MAX_LABEL + 5,
    read(text, at, anchorLength, final) {
      const header = label(text, at + anchorLength, final);
      if (header === -2) return OPEN;
      if (header === -1) return NONE;
      const limit = Math.min(text.length, header + MAX_BODY);
      let i = header;
      for (; i < limit; i++) {
        const c = text.charCodeAt(i);
        if (c === 45 && text.startsWith("-----", i)) break;
        if (!isBodyChar(c)) break;
      }
      if (i === text.length && !final) return OPEN;
      if (text.startsWith("-----", i)) {
        // the footer, or the start of one that may still arrive
        const rest = text.slice(i, i + FOOTER.length);
        if (rest.length < FOOTER.length && FOOTER.startsWith(rest) && !final) return OPEN;
        if (rest === FOOTER) {
          const footer = label(text, i + FOOTER.length, final);
          if (footer === -2) return OPEN;
          if (footer > 0) return { t: "match", start: at, end: footer };
        }
      }
      return { t: "match", start: at, end: i };
    },
  };
}

/** One rule per exact secret of the service's own (instance token, API keys, ...). */
function exactRules(secrets: string[]): Rule[] {
  return [...new Set(secrets)].map((secret) => ({
    kind: "secret",
    anchors: [secret],
    maxLength: secret.length,
    read: (_text, at, anchorLength) => ({ t: "match", start: at, end: at + anchorLength }),
  }));
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
const anyCase = (s: string) =>
  [...s].map((ch) => (/[a-z]/i.test(ch) ? `[${ch.toLowerCase()}${ch.toUpperCase()}]` : escapeRegex(ch))).join("");

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
