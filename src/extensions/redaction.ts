import { createRedactor, MIN_SECRET_LENGTH, type Redactor } from "../safety";
import type { Safety } from "../safety/safety";

/**
 * The credentials of extensions, which become known while the service runs (a key entered
 * in the web UI, a token fetched by OAuth): added here, they are redacted like the
 * service's own secrets.
 */
export class SecretSet {
  readonly #secrets = new Set<string>();
  #redactor: Redactor | undefined;

  add(secret: string): void {
    if (secret.trim().length < MIN_SECRET_LENGTH || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    this.#redactor = undefined;
  }

  get redactor(): Redactor | undefined {
    if (!this.#secrets.size) return undefined;
    return (this.#redactor ??= createRedactor([...this.#secrets]));
  }

  /** The safety layer with these secrets redacted too, before its own rules run. */
  guard(base: Safety): Safety {
    return {
      redact: (text) => base.redact(this.redactor?.redact(text) ?? text),
      streamRedactor: () => {
        const inner = this.redactor?.stream();
        const outer = base.streamRedactor();
        if (!inner) return outer;
        return {
          push: (delta) => outer.push(inner.push(delta)),
          flush: () => outer.push(inner.flush()) + outer.flush(),
        };
      },
      toolOutput: (name, output) => base.toolOutput(name, output),
    };
  }
}
