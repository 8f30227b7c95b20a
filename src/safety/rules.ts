/**
 * The credential formats the redactor knows, one rule each: where a secret may start (fixed
 * literal anchors) and a bounded, hand-written read of the rest. `redact.ts` scans with them.
 */

/** What a rule found at an anchor. */
export type Outcome =
  /** Not a secret; go on looking one character later. */
  | { t: "none" }
  /** Could still become a secret with more text (only when the text is not final). */
  | { t: "open" }
  /** A secret: replace [start, end) by the marker. */
  | { t: "match"; start: number; end: number }
  /** Looked at, not a secret, and nothing inside it is either: resume after `end`. */
  | { t: "skip"; end: number };

export interface Rule {
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

export const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
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

export const RULES: Rule[] = [
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
export function exactRules(secrets: string[]): Rule[] {
  return [...new Set(secrets)].map((secret) => ({
    kind: "secret",
    anchors: [secret],
    maxLength: secret.length,
    read: (_text, at, anchorLength) => ({ t: "match", start: at, end: at + anchorLength }),
  }));
}

export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
export const anyCase = (s: string) =>
  [...s].map((ch) => (/[a-z]/i.test(ch) ? `[${ch.toLowerCase()}${ch.toUpperCase()}]` : escapeRegex(ch))).join("");
