import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The file in the service home holding the key credentials are encrypted with. */
export const secretKeyPath = (home: string) => join(home, "secret.key");

/**
 * AES-256-GCM for credentials at rest. The key is 32 random bytes in `$SERVICE_HOME/secret.key`
 * (hex, mode 0600), made on first use; the database alone does not reveal a credential.
 * `context` (which row a secret belongs to) is bound as associated data, so a ciphertext
 * copied into another row does not decrypt.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("the secret key must be 32 bytes");
    this.#key = key;
  }

  /** Opens the home's secret.key, creating it (0600) when it does not exist yet. */
  static forHome(home: string): SecretBox {
    const file = secretKeyPath(home);
    if (!existsSync(file)) {
      try {
        writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
      } catch (e) {
        // another process made it first: use theirs
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      chmodSync(file, 0o600);
    }
    const hex = readFileSync(file, "utf8").trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} does not hold a 32-byte hex key`);
    return new SecretBox(Buffer.from(hex, "hex"));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
  }

  /** Throws when the ciphertext was changed, belongs to another row, or another key made it. */
  open(sealed: string, context: string): string {
    const [version, data] = sealed.split(":", 2);
    if (version !== VERSION || !data) throw new Error("not a sealed secret");
    const raw = Buffer.from(data, "base64");
    // a whole tag, always: a shorter one would be checked as given, and be easier to forge
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}
