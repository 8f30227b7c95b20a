// Leak protection: every credential format, no over-redaction, streaming across deltas, linear time.
import { describe, expect, test } from "bun:test";
import { createRedactor } from "../../src/safety/redact";
import { createSafety } from "../../src/safety";

const INSTANCE = "test-instance-token-0123456789abcdef";
const r = createRedactor([INSTANCE, "llm-api-key-7f3a9c", "webhook-secret-xyz"]);

/** Deterministic pseudo-random characters of an alphabet (so failures reproduce). */
function randomChars(n: number, alphabet: string, seed = 7): string {
  let x = seed;
  let out = "";
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[x % alphabet.length];
  }
  return out;
}
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";

const OPENAI_LEGACY = `sk-${randomChars(48, ALNUM, 1)}`;
const OPENAI_PROJECT = `sk-proj-${randomChars(40, ALNUM + "_-", 2)}`;
const ANTHROPIC = `sk-ant-api03-${randomChars(93, ALNUM + "_-", 3)}AA`;
const GITHUB_CLASSIC = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].map((p, i) => p + randomChars(36, ALNUM, 10 + i));
const GITHUB_FINE = `github_pat_${randomChars(22, ALNUM, 4)}_${randomChars(59, ALNUM, 5)}`;
const AWS_ID = "AKIAIOSFODNN7EXAMPLE";
const AWS_STS_ID = "ASIAY34FZKBOKMUTVV7A";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SLACK_TOKENS = ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"].map((p, i) => `${p}1234567890-${randomChars(24, ALNUM, 20 + i)}`);
const SLACK_WEBHOOK = `https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${randomChars(24, ALNUM, 6)}`;
const JWT = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${randomChars(43, ALNUM + "-_", 8)}`;
const USER_TOKEN = `svc_${randomChars(64, HEX, 9)}`;
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  ...Array.from({ length: 6 }, (_, i) => randomChars(64, ALNUM + "+/", 30 + i)),
  "-----END RSA PRIVATE KEY-----",
].join("\n");

describe("credential formats", () => {
  test.each([
    ["an OpenAI key", OPENAI_LEGACY, "openai"],
    ["an OpenAI project key", OPENAI_PROJECT, "openai"],
    ["an Anthropic key", ANTHROPIC, "anthropic"],
    ...GITHUB_CLASSIC.map((k) => [`a GitHub token ${k.slice(0, 4)}`, k, "github"] as [string, string, string]),
    ["a fine-grained GitHub token", GITHUB_FINE, "github"],
    ["an AWS access key id", AWS_ID, "aws_access_key"],
    ["an AWS STS key id", AWS_STS_ID, "aws_access_key"],
    ...SLACK_TOKENS.map((k) => [`a Slack token ${k.slice(0, 5)}`, k, "slack"] as [string, string, string]),
    ["a Slack webhook URL", SLACK_WEBHOOK, "slack_webhook"],
    ["a per-user token", USER_TOKEN, "user_token"],
    ["a PEM private key", PEM, "private_key"],
    ["the instance token", INSTANCE, "secret"],
    ["the LLM API key", "llm-api-key-7f3a9c", "secret"],
    ["the webhook secret", "webhook-secret-xyz", "secret"],
  ])("%s is replaced in prose, JSON and at the edges of the text", (_, secret, kind) => {
    const marker = `[REDACTED:${kind}]`;
    expect(r.redact(secret)).toBe(marker);
    expect(r.redact(`my key is ${secret}, keep it safe`)).toBe(`my key is ${marker}, keep it safe`);
    expect(r.redact(JSON.stringify({ key: secret }))).toBe(`{"key":"${marker}"}`);
    expect(r.redact(`(${secret})\n`)).toBe(`(${marker})\n`);
  });

  test("Bearer tokens: the token goes, the scheme word stays, in any case", () => {
    expect(r.redact(`Authorization: Bearer ${JWT}`)).toBe("Authorization: Bearer [REDACTED:bearer]");
    expect(r.redact(`curl -H "authorization: bearer ${JWT}" x`)).toBe('curl -H "authorization: bearer [REDACTED:bearer]" x');
    expect(r.redact(`BEARER\t${randomChars(32, HEX)}`)).toBe("BEARER\t[REDACTED:bearer]");
  });

  test("an AWS secret key is redacted where it is labelled, and only the value", () => {
    expect(r.redact(`aws_secret_access_key = ${AWS_SECRET}`)).toBe("aws_secret_access_key = [REDACTED:aws_secret_key]");
    expect(r.redact(`AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`)).toBe("AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]");
    expect(r.redact(`{"SecretAccessKey": "${AWS_SECRET}"}`)).toBe('{"SecretAccessKey": "[REDACTED:aws_secret_key]"}');
  });

  test("PEM blocks: encrypted ones, ones inside JSON strings, and ones cut short", () => {
    const encrypted = `-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,ABCDEF0123\n\n${randomChars(64, ALNUM)}\n-----END ENCRYPTED PRIVATE KEY-----`;
    expect(r.redact(`before\n${encrypted}\nafter`)).toBe("before\n[REDACTED:private_key]\nafter");
    expect(r.redact(JSON.stringify({ pem: PEM }))).toBe('{"pem":"[REDACTED:private_key]"}');
    expect(r.redact(`-----BEGIN OPENSSH PRIVATE KEY-----\n${randomChars(70, ALNUM)}`)).toBe("[REDACTED:private_key]");
    // public keys and certificates are not secrets
    const cert = `-----BEGIN CERTIFICATE-----\n${randomChars(64, ALNUM)}\n-----END CERTIFICATE-----`;
    expect(r.redact(cert)).toBe(cert);
  });

  test("several secrets in one text are all replaced", () => {
    const text = `a=${OPENAI_PROJECT} b=${AWS_ID} c=${GITHUB_CLASSIC[0]} d=${INSTANCE} e=${USER_TOKEN}`;
    expect(r.redact(text)).toBe(
      "a=[REDACTED:openai] b=[REDACTED:aws_access_key] c=[REDACTED:github] d=[REDACTED:secret] e=[REDACTED:user_token]",
    );
  });

  test("redaction is idempotent", () => {
    const once = r.redact(`Bearer ${JWT} ${PEM} ${OPENAI_PROJECT}`);
    expect(r.redact(once)).toBe(once);
  });
});

describe("normal text is left alone", () => {
  test.each([
    "The task-management-system-overview-2024 doc is ready.",
    "Install scikit-learn; the sk-learn-is-a-great-library joke is old.",
    "We use Bearer authentication; see the bearer token section.",
    "A bearer of bad news arrived.",
    "AKIA is a prefix; AKIAshort is not a key.",
    "The ghp_ prefix marks classic GitHub tokens.",
    "xoxb- tokens are bot tokens.",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "svc_ followed by hex, e.g. svc_abc, is a user token.",
    "Call https://hooks.slack.com/services to post.",
    "aws_secret_access_key is the variable name.",
    "Émojis 🎉 and accents: naïve café, 日本語のテキスト.",
    "",
  ])("%p", (text) => {
    expect(r.redact(text)).toBe(text);
  });

  test("short configured secrets are not redacted as exact strings (they would hit ordinary words)", () => {
    const safety = createSafety({ secrets: ["abc", "", undefined, "longer-secret-value"] });
    expect(safety.redact("abc is fine, longer-secret-value is not")).toBe("abc is fine, [REDACTED:secret] is not");
  });
});

/** Streams `text` through a fresh stream redactor in pieces of the given sizes (cycled). */
function streamed(text: string, sizes: number[], redactor = r): { out: string; pieces: string[] } {
  const s = redactor.stream();
  const pieces: string[] = [];
  let i = 0;
  for (let k = 0; i < text.length; k++) {
    const n = sizes[k % sizes.length]!;
    pieces.push(s.push(text.slice(i, i + n)));
    i += n;
  }
  pieces.push(s.flush());
  return { out: pieces.join(""), pieces };
}

describe("streaming", () => {
  const secrets = [OPENAI_PROJECT, ANTHROPIC, GITHUB_FINE, AWS_ID, SLACK_WEBHOOK, USER_TOKEN, INSTANCE, PEM, `Bearer ${JWT}`, `aws_secret_access_key=${AWS_SECRET}`];

  test.each(secrets.map((s) => [s.slice(0, 16), s]))("%s split at every position is still caught", (_, secret) => {
    const text = `prefix text ${secret} suffix text`;
    const expected = r.redact(text);
    expect(expected).not.toContain(secret);
    for (let cut = 1; cut < text.length; cut++) {
      const s = r.stream();
      const out = s.push(text.slice(0, cut)) + s.push(text.slice(cut)) + s.flush();
      expect(out).toBe(expected);
    }
  });

  test("any chunking gives the same text as redacting the whole", () => {
    const text = `Here: ${OPENAI_PROJECT} and ${INSTANCE}.\n${PEM}\nBearer ${JWT}; ${AWS_ID} ${USER_TOKEN} sk-learn-is-fun bearer of news ${SLACK_TOKENS[0]}`;
    for (const sizes of [[1], [2], [3], [5, 1, 7], [13], [64], [1, 1, 2, 3, 5, 8, 13]]) {
      expect(streamed(text, sizes).out).toBe(r.redact(text));
    }
  });

  test("no piece ever contains a secret or a long enough prefix of one to matter", () => {
    const { pieces } = streamed(`key: ${OPENAI_PROJECT} token ${INSTANCE} end`, [1]);
    for (const piece of pieces) {
      expect(piece).not.toContain("sk-proj");
      expect(piece).not.toContain("instance-token");
    }
  });

  test("text that cannot start a secret is emitted at once; a possible prefix is held, then released", () => {
    const s = r.stream();
    expect(s.push("Hello world. ")).toBe("Hello world. ");
    expect(s.push("The key is s")).toBe("The key is ");
    expect(s.push("k")).toBe("");
    expect(s.push("y.")).toBe("sky.");
    expect(s.push(" sk-proj-")).toBe(" ");
    expect(s.push(OPENAI_PROJECT.slice(8) + " and")).toBe("[REDACTED:openai] and");
    expect(s.flush()).toBe("");
  });

  test("the hold-back is bounded: what may still grow into a secret is held, no more than a secret can span", () => {
    const s = r.stream();
    let out = s.push("sk-");
    for (let i = 0; i < 50; i++) out += s.push("a".repeat(100));
    // an sk- key is at most 512 characters after its prefix: the rest of the run is plain text
    expect(out).toStartWith("[REDACTED:openai]");
    expect(out.length).toBeGreaterThan(5_000 - 600);
    out += s.flush();
    expect(out).toBe(r.redact("sk-" + "a".repeat(5_000)));

    const pem = r.stream();
    let emitted = pem.push("-----BEGIN RSA PRIVATE KEY-----\n");
    for (let i = 0; i < 30; i++) emitted += pem.push("A".repeat(1_000));
    // a block cut off after 20,000 characters of body is redacted up to there
    expect(emitted).toStartWith("[REDACTED:private_key]");
    const all = emitted + pem.flush();
    expect(all).toBe(r.redact(`-----BEGIN RSA PRIVATE KEY-----\n${"A".repeat(30_000)}`));
    expect(all.length - "[REDACTED:private_key]".length).toBeGreaterThan(10_000 - 2);
  });

  test("flush releases a held prefix that never became a secret", () => {
    const s = r.stream();
    expect(s.push("ends with sk-pro")).toBe("ends with ");
    expect(s.flush()).toBe("sk-pro");
  });
});

describe("linear time on adversarial input", () => {
  const MB = 1 << 20;
  const inputs: [string, string][] = [
    ["repeated sk- prefixes", "sk-".repeat(MB / 3)],
    ["repeated short candidates", "sk-aaaaaaaaaaaaaaaaaaa ".repeat(MB / 23)],
    ["repeated Bearer", "Bearer ".repeat(MB / 7)],
    ["repeated Bearer with short tokens", "Bearer abc ".repeat(MB / 11)],
    ["repeated PEM headers", "-----BEGIN RSA PRIVATE KEY-----".repeat(MB / 31)],
    ["a PEM header and a megabyte of body", `-----BEGIN RSA PRIVATE KEY-----\n${"A".repeat(MB)}`],
    ["repeated AKIA", "AKIA".repeat(MB / 4)],
    ["repeated labels", "aws_secret_access_key=".repeat(MB / 22)],
    ["near-misses of the instance token", INSTANCE.slice(0, -1).repeat(MB / INSTANCE.length)],
    ["one long token run", "a".repeat(MB)],
    ["dashes", "-".repeat(MB)],
  ];

  test.each(inputs)("%s: whole text and stream finish well within 2 s", (_, text) => {
    const started = performance.now();
    const whole = r.redact(text);
    const stream = streamed(text, [4096]).out;
    expect(stream).toBe(whole);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
