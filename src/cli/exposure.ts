import type { Config } from "../config/schema";

/** A listener's host that is every interface of the machine: 0.0.0.0 or ::. */
export const allInterfaces = (host: string) => ["0.0.0.0", "::", "[::]", "*", ""].includes(host.trim());

/**
 * What `serve` and `doctor` say when the webhook channel listens on every interface (the
 * spec's default, HTTP_HOST 0.0.0.0) while the gateway keeps to 127.0.0.1: any machine that
 * reaches this one can send it jobs, with the secret. Undefined when it does not.
 */
export function webhookExposure(config: Pick<Config, "http">): string | undefined {
  const { enabled, host, port } = config.http;
  if (!enabled || !allInterfaces(host)) return undefined;
  return (
    `the webhook channel listens on all interfaces (${host.includes(":") ? `[${host}]` : host}:${port}): other machines that reach this one can send it jobs (with the secret); ` +
    "set HTTP_HOST=127.0.0.1 (or one LAN address) to keep it to fewer"
  );
}
