import type { Logger } from "../log";
import type { Db } from "../store/db";
import {
  deleteCredential,
  deleteCredentials,
  getCredential,
  INSTANCE,
  listCredentials,
  putCredential,
  putOAuthState,
  takeOAuthState,
} from "../store/extensions";
import type { OAuth2Credentials } from "./manifest";
import { authorizeUrl, exchangeCode, hashState, newState, newVerifier, OAuthError, refreshTokens, type TokenSet } from "./oauth";
import { SecretBox } from "./secret-box";

/** How long a started authorization may take before its callback is refused. */
export const OAUTH_STATE_TTL_MS = 15 * 60_000;
/** An access token this close to expiring (or past half its life, if shorter) is refreshed before use. */
const EXPIRY_MARGIN_MS = 60_000;

function fresh(tokens: TokenSet): boolean {
  if (tokens.expires_at === undefined) return true;
  const lifetime = tokens.obtained_at === undefined ? Infinity : tokens.expires_at - tokens.obtained_at;
  return tokens.expires_at - Math.min(EXPIRY_MARGIN_MS, lifetime / 2) > Date.now();
}

const context = (extension: string, userId: string, kind: string) => `${extension}\u0000${userId}\u0000${kind}`;

/**
 * Extension credentials, encrypted at rest: the instance's API keys and each user's OAuth
 * tokens. Every secret it reads or writes is reported through `onSecret`, so the safety
 * layer can keep it away from the model and out of answers.
 */
export class CredentialStore {
  #box?: SecretBox;
  readonly #refreshing = new Map<string, Promise<TokenSet | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly home: string,
    private readonly onSecret: (secret: string) => void,
    private readonly log: Pick<Logger, "warn" | "error">,
  ) {}

  /** Made on first use: a home with no credentials gets no key file. */
  get box(): SecretBox {
    return (this.#box ??= SecretBox.forHome(this.home));
  }

  async setApiKey(extension: string, key: string): Promise<void> {
    this.onSecret(key);
    await putCredential(this.db, {
      extension,
      userId: INSTANCE,
      kind: "api_key",
      secret: this.box.seal(key, context(extension, INSTANCE, "api_key")),
      expiresAt: null,
    });
  }

  async apiKey(extension: string): Promise<string | undefined> {
    const row = await getCredential(this.db, extension, INSTANCE);
    if (row?.kind !== "api_key") return undefined;
    const key = this.#open(row.secret, extension, INSTANCE, "api_key");
    if (key) this.onSecret(key);
    return key;
  }

  /** Every instance API key, for the safety layer at start-up. */
  async instanceKeys(): Promise<string[]> {
    const rows = await listCredentials(this.db, { userId: INSTANCE });
    return rows.flatMap((r) => {
      const key = r.kind === "api_key" ? this.#open(r.secret, r.extension, INSTANCE, "api_key") : undefined;
      return key ? [key] : [];
    });
  }

  async hasTokens(extension: string, userId: string): Promise<boolean> {
    return (await getCredential(this.db, extension, userId))?.kind === "oauth2";
  }

  /**
   * The user's tokens for the extension, refreshed first when the access token has expired;
   * undefined when there are none, or the refresh failed (the grant is then forgotten, and
   * the user connects again).
   */
  async tokens(extension: string, userId: string, spec: OAuth2Credentials): Promise<TokenSet | undefined> {
    const row = await getCredential(this.db, extension, userId);
    if (row?.kind !== "oauth2") return undefined;
    const json = this.#open(row.secret, extension, userId, "oauth2");
    if (!json) return undefined;
    const tokens = JSON.parse(json) as TokenSet;
    if (fresh(tokens)) {
      this.#report(tokens);
      return tokens;
    }
    // one refresh at a time per grant: concurrent calls share it
    const key = context(extension, userId, "refresh");
    let refreshing = this.#refreshing.get(key);
    if (!refreshing) {
      refreshing = (async () => {
        try {
          const renewed = await refreshTokens(spec, tokens);
          await this.saveTokens(extension, userId, renewed);
          return renewed;
        } catch (e) {
          this.log.warn(`extension ${extension}: ${(e as Error).message}; the user has to connect it again`, { extension, user_id: userId });
          await deleteCredential(this.db, extension, userId);
          return undefined;
        } finally {
          this.#refreshing.delete(key);
        }
      })();
      this.#refreshing.set(key, refreshing);
    }
    return refreshing;
  }

  async saveTokens(extension: string, userId: string, tokens: TokenSet): Promise<void> {
    this.#report(tokens);
    await putCredential(this.db, {
      extension,
      userId,
      kind: "oauth2",
      secret: this.box.seal(JSON.stringify(tokens), context(extension, userId, "oauth2")),
      expiresAt: tokens.expires_at ?? null,
    });
  }

  async disconnect(extension: string, userId: string): Promise<void> {
    await deleteCredential(this.db, extension, userId);
  }

  /** Forgets every credential of an extension (it is being removed). */
  async forget(extension: string): Promise<void> {
    await deleteCredentials(this.db, extension);
  }

  /** Starts an authorization: keeps the state (hashed) and the PKCE verifier, returns the URL to send the user to. */
  async startOAuth(extension: string, userId: string, spec: OAuth2Credentials, redirectUri: string): Promise<string> {
    const state = newState();
    const verifier = newVerifier();
    await putOAuthState(this.db, {
      stateHash: hashState(state),
      extension,
      userId,
      verifier: this.box.seal(verifier, context(extension, userId, "verifier")),
      redirectUri,
      createdAt: Date.now(),
    });
    return authorizeUrl(spec, { redirectUri, state, verifier });
  }

  /**
   * Finishes an authorization from its callback: the state must be one this service issued
   * (once, recently); the code is exchanged with the PKCE verifier and the tokens are stored.
   */
  async finishOAuth(
    state: string,
    code: string,
    specOf: (extension: string) => OAuth2Credentials | undefined,
  ): Promise<{ extension: string; userId: string }> {
    const row = await takeOAuthState(this.db, hashState(state), OAUTH_STATE_TTL_MS);
    if (!row) throw new OAuthError("this sign-in link is unknown, was already used or has expired; start again from the web UI");
    const spec = specOf(row.extension);
    if (!spec) throw new OAuthError(`the extension ${row.extension} is no longer installed or no longer uses OAuth`);
    const verifier = this.#open(row.verifier, row.extension, row.userId, "verifier");
    if (!verifier) throw new OAuthError("the sign-in could not be checked; start again from the web UI");
    const tokens = await exchangeCode(spec, { code, redirectUri: row.redirectUri, verifier });
    await this.saveTokens(row.extension, row.userId, tokens);
    return { extension: row.extension, userId: row.userId };
  }

  /** Drops a started authorization the user refused. */
  async abandonOAuth(state: string): Promise<void> {
    await takeOAuthState(this.db, hashState(state), OAUTH_STATE_TTL_MS);
  }

  #report(tokens: TokenSet): void {
    this.onSecret(tokens.access_token);
    if (tokens.refresh_token) this.onSecret(tokens.refresh_token);
  }

  #open(sealed: string, extension: string, userId: string, kind: string): string | undefined {
    try {
      return this.box.open(sealed, context(extension, userId, kind));
    } catch (e) {
      this.log.error(`extension ${extension}: a stored credential cannot be decrypted (${(e as Error).message}); was secret.key replaced?`, { extension, user_id: userId, kind });
      return undefined;
    }
  }
}
