import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SecretBox } from "../../extensions/secret-box";

/** What a compaction item of `responses.compact` carries, sealed. */
const Sealed = Type.Object({
  v: Type.Literal(1),
  summary: Type.String(),
  /** What it summarises held untrusted content: accepted back, it taints the turn as that did. */
  untrusted: Type.Boolean(),
  created_at: Type.Integer(),
});
export type SealedCompaction = Static<typeof Sealed>;

/**
 * The `encrypted_content` of the compaction items this service makes: the summary, sealed with
 * AES-256-GCM under the home's secret.key and bound to the user it was made for, so that a
 * caller can neither read nor alter it, nor forge one, nor use another user's. The key is made
 * on first use.
 */
export class CompactionSeal {
  #box: SecretBox | undefined;

  constructor(private readonly home: string) {}

  #key(): SecretBox {
    return (this.#box ??= SecretBox.forHome(this.home));
  }

  seal(userId: string, content: Omit<SealedCompaction, "v">): string {
    return this.#key().seal(JSON.stringify({ v: 1, ...content }), context(userId));
  }

  /** The sealed content, or undefined when this service did not seal it for this user (altered, forged, another's). */
  open(userId: string, encrypted: string): SealedCompaction | undefined {
    try {
      const content: unknown = JSON.parse(this.#key().open(encrypted, context(userId)));
      return Value.Check(Sealed, content) ? content : undefined;
    } catch {
      return undefined;
    }
  }
}

const context = (userId: string) => `responses.compact:${userId}`;
