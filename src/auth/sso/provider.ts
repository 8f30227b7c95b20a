/** Who the identity provider says signed in. */
export interface Identity {
  /** The provider's stable id of the person (`sub`, GitHub's numeric id). */
  subject: string;
  /** Verified email addresses, the preferred one first; unverified ones never appear. */
  emails: string[];
  /** Addresses the provider named without saying they are verified (said in a refusal's log line). */
  unverified: string[];
  name?: string;
}

/** What one sign-in carries from its start to its callback. */
export interface FlowChecks {
  state: string;
  nonce: string;
  /** The PKCE code_verifier (S256). */
  verifier: string;
}

/** One configured identity provider: Google, GitHub, or an OpenID Connect issuer. */
export interface SsoProvider {
  id: "google" | "github" | "oidc";
  /** Its name on the sign-in card. */
  name: string;
  /** Where the browser goes to sign in. */
  authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL>;
  /**
   * The callback as the provider sent it (`redirectUri` and its query): the code exchanged
   * and every check made (state, PKCE, and for OpenID Connect the ID token's signature, `iss`,
   * `aud`, `exp` and `nonce`). Throws when any fails.
   */
  finish(callbackUrl: URL, checks: FlowChecks): Promise<Identity>;
}

/** How long any request to a provider may take. */
export const PROVIDER_TIMEOUT_S = 15;

/** An error of the client library, said with what it found: the HTTP status, the values that differ. */
export function failureReason(e: unknown): string {
  const { message, cause } = e as Error & { cause?: unknown };
  if (cause instanceof Error) return `${message} (${cause.message})`;
  if (cause instanceof Response) return `${message} (HTTP ${cause.status} from ${cause.url})`;
  const c = cause as { expected?: unknown; claim?: string; attribute?: string; body?: Record<string, unknown>; claims?: Record<string, unknown> } | undefined;
  const name = c?.claim ?? c?.attribute;
  if (name && c?.expected !== undefined) return `${message} (${name}: expected ${JSON.stringify(c.expected)}, got ${JSON.stringify((c.claims ?? c.body)?.[name])})`;
  return message;
}
