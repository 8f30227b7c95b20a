// How a webhook request proves it comes from someone who holds the secret, and how the
// service signs what it sends: a shared-secret header, GitHub's and Gitea's HMAC of the body,
// and Standard Webhooks (standardwebhooks.com) with its id and timestamp, through its own
// library, so stock receivers and senders agree with us byte for byte.
import { timingSafeEqual } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { sameSecret } from "../../auth/tokens";

/** How a request is verified: `secret` header, GitHub's `X-Hub-Signature-256`, Gitea's `X-Gitea-Signature`, or Standard Webhooks. */
export type Verification = "secret" | "github" | "gitea" | "standard";

/** The answer to a request that failed verification: why, for the 401. */
export class Unverified extends Error {}

const encoder = new TextEncoder();
/** Standard Webhooks keyed by the secret's own bytes (a stock receiver takes `whsec_` + its base64). */
const standard = (secret: string) => new Webhook(encoder.encode(secret), { format: "raw" });

const hmacHex = (secret: string, body: Uint8Array) => new Bun.CryptoHasher("sha256", secret).update(body).digest();

function sameHmac(givenHex: string, secret: string, body: Uint8Array): boolean {
  const expected = hmacHex(secret, body);
  const got = Buffer.from(givenHex, "hex");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/**
 * Checks a request signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64>`); a timestamp more than 5 minutes away is refused, so a
 * captured request cannot be replayed later.
 */
export function verifyStandard(headers: Headers, body: Uint8Array, secret: string): void {
  try {
    standard(secret).verify(Buffer.from(body), Object.fromEntries(headers), { jsonParse: false });
  } catch (e) {
    if (!(e instanceof WebhookVerificationError)) throw new Unverified("invalid webhook-signature");
    const why = e.message === "Message timestamp too old" || e.message === "Message timestamp too new"
      ? "webhook-timestamp is more than 5 minutes away from the service's clock"
      : e.message === "Missing required headers"
        ? "webhook-id, webhook-timestamp and webhook-signature are all required"
        : "invalid webhook-signature";
    throw new Unverified(why);
  }
}

/** Whether the request carries Standard Webhooks headers (then they must verify). */
export const signedStandard = (headers: Headers) => headers.has("webhook-signature");

/**
 * Verifies a request the way `how` says; throws Unverified. A request without a body (a read)
 * needs the secret header: the HMAC of an empty body never changes, so it would be a second,
 * static secret.
 */
export function verify(how: Verification, headers: Headers, body: Uint8Array | undefined, secret: string): void {
  const fail = (why: string): never => {
    throw new Unverified(why);
  };
  if (how === "secret") {
    const given = headers.get("x-webhook-secret");
    if (given === null || !sameSecret(given, secret)) fail("missing or invalid webhook secret");
    return;
  }
  if (!body) return fail("missing or invalid webhook secret");
  if (how === "standard") return verifyStandard(headers, body, secret);
  if (how === "github") {
    const signature = headers.get("x-hub-signature-256");
    if (!signature?.startsWith("sha256=") || !sameHmac(signature.slice(7), secret, body)) fail("missing or invalid X-Hub-Signature-256");
    return;
  }
  const signature = headers.get("x-gitea-signature");
  if (!signature || !sameHmac(signature, secret, body)) fail("missing or invalid X-Gitea-Signature");
}

/** The spec's callback signature: `sha256=` and the hex HMAC-SHA256 of the body. */
export const hubSignature = (body: string, secret: string) => `sha256=${new Bun.CryptoHasher("sha256", secret).update(body).digest("hex")}`;

/** Standard Webhooks headers for an outgoing message: its id, the time, and the v1 signature. */
export function standardHeaders(id: string, body: string, secret: string, at = new Date()): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": standard(secret).sign(id, at, body),
  };
}
