import type { Config } from "../../config/schema";
import { CallbackAllowList } from "./callbacks";
import { compileSources } from "./sources";

/** A shorter webhook secret can be guessed: refused. */
export const MIN_WEBHOOK_SECRET = 16;

/**
 * What is wrong with the webhook channel's settings, if anything: `serve` refuses to start
 * the channel over it, and `service doctor` reports it. The allow list is checked even with
 * the channel off, where only doctor asks.
 */
export function webhookConfigProblem(config: Config): string | undefined {
  try {
    new CallbackAllowList(config.http.callbackAllowHosts);
  } catch (e) {
    return (e as Error).message;
  }
  try {
    compileSources(config.http.sources);
  } catch (e) {
    return (e as Error).message;
  }
  if (!config.http.enabled) return undefined;
  const secret = config.http.webhookSecret;
  if (!secret) return "HTTP_ENABLED is true but HTTP_WEBHOOK_SECRET is not set: the webhook channel needs a shared secret.";
  if (secret.length < MIN_WEBHOOK_SECRET) {
    return `HTTP_WEBHOOK_SECRET is ${secret.length} characters long: the webhook channel needs a secret of at least ${MIN_WEBHOOK_SECRET} characters (for example: openssl rand -hex 32).`;
  }
  return undefined;
}
