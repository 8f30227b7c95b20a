import { wrapToolOutput } from "./injection";
import { createRedactor } from "./redact";
import type { Safety } from "./safety";

export { scanForInjection, wrapToolOutput, type InjectionFlag, type InjectionKind } from "./injection";
export { createRedactor, type Redactor, type StreamRedactor } from "./redact";
export type { Safety } from "./safety";

/** Secrets shorter than this are not redacted as exact strings: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 8;

/**
 * The safety layer the agent loop uses: credentials and the service's own `secrets` are
 * redacted wherever text crosses to or from the model, and tool output is wrapped as
 * untrusted data with prompt-injection patterns flagged or removed.
 */
export function createSafety(opts: { secrets: (string | undefined | null)[] }): Safety {
  const secrets = opts.secrets.filter((s): s is string => typeof s === "string" && s.trim().length >= MIN_SECRET_LENGTH);
  const redactor = createRedactor(secrets);
  return {
    redact: redactor.redact,
    streamRedactor: redactor.stream,
    toolOutput: wrapToolOutput,
  };
}
