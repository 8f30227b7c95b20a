import * as client from "openid-client";
import { newUuid } from "../../conversation/ids";
import { AuthFailure, NotFound, Unavailable } from "../../errors";
import type { Logger } from "../../log";
import type { Db } from "../../store/db";
import { deleteSessionByHash, findUsersByEmail, startSession } from "../../store/sessions";
import type { UserRow } from "../../store/users";
import { bearerOf, type Authenticator } from "../principal";
import { hashToken, newToken, SESSION_TOKEN_PREFIX } from "../tokens";
import { PendingSignIns } from "./pending";
import { failureReason, type Identity, type SsoProvider } from "./provider";
import { configuredProviders, redirectUri, type SsoSettings } from "./providers";

const DAY_MS = 86_400_000;

/**
 * Signing in through an identity provider: the flow's start and callback, the rules of who
 * may come in (verified email, allowed domains, an existing user or `autoCreate`), and the
 * session bearer that follows, which the Authenticator accepts like a per-user token.
 */
export class SsoService {
  readonly #providers: Map<string, SsoProvider>;
  readonly #pending = new PendingSignIns();

  constructor(
    private readonly deps: {
      db: Db;
      settings: SsoSettings;
      auth: Authenticator;
      /** The gateway's address, when `auth.sso.publicUrl` does not say it. */
      gatewayUrl: () => string;
      log: Logger;
    },
  ) {
    this.#providers = new Map(configuredProviders(deps.settings).map((p) => [p.id, p]));
  }

  /** What the sign-in card offers. */
  list(): { id: string; name: string }[] {
    return [...this.#providers.values()].map((p) => ({ id: p.id, name: p.name }));
  }

  redirectUri(id: string): string {
    return redirectUri(this.deps.settings.publicUrl ?? this.deps.gatewayUrl(), id);
  }

  /** The provider's sign-in page for a new flow, bound to the browser's `binding` cookie. */
  async start(id: string, binding: string): Promise<URL> {
    const provider = this.#provider(id);
    const checks = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    let url: URL;
    try {
      url = await provider.authorizationUrl(this.redirectUri(id), checks);
    } catch (e) {
      this.deps.log.warn(`sso ${id}: the provider could not be reached: ${failureReason(e)}`);
      throw new Unavailable(`${provider.name} could not be reached to sign in: ${failureReason(e)}`);
    }
    this.#pending.add(id, checks, binding);
    return url;
  }

  /** The provider's callback: checked, the person found (or created), a session bearer made. */
  async finish(id: string, query: URLSearchParams, binding: string | undefined): Promise<{ token: string; userId: string }> {
    const provider = this.#provider(id);
    const state = query.get("state");
    const checks = state ? this.#pending.take(id, state, binding) : undefined;
    if (!checks) return this.#refuse(id, "the callback's state is unknown, used, expired or from another browser");
    const error = query.get("error");
    if (error) return this.#refuse(id, `the provider said ${error}${query.get("error_description") ? `: ${query.get("error_description")}` : ""}`);
    const callback = new URL(this.redirectUri(id));
    callback.search = query.toString();
    let identity: Identity;
    try {
      identity = await provider.finish(callback, checks);
    } catch (e) {
      return this.#refuse(id, failureReason(e));
    }
    return this.#signIn(provider, identity);
  }

  /** Ends the session the bearer names; any other valid token is left as it is. */
  async logout(authorization: string | null): Promise<void> {
    await this.deps.auth.authenticate(authorization);
    const token = bearerOf(authorization)!;
    if (!token.startsWith(SESSION_TOKEN_PREFIX)) return;
    await this.#store(() => deleteSessionByHash(this.deps.db, hashToken(token)));
    this.deps.auth.forgetToken(token);
  }

  async #signIn(provider: SsoProvider, identity: Identity): Promise<{ token: string; userId: string }> {
    const { settings, db, log } = this.deps;
    if (!identity.emails.length) {
      const named = identity.unverified.length ? `: it says ${identity.unverified.join(", ")} is not verified (email_verified)` : "";
      return this.#refuse(provider.id, `the provider gave no verified email address${named}`);
    }
    const domains = settings.allowedDomains.map((d) => d.toLowerCase());
    const allowed = identity.emails.filter((e) => !domains.length || domains.includes(e.slice(e.lastIndexOf("@") + 1).toLowerCase()));
    if (!allowed.length) {
      log.warn(`sso ${provider.id}: ${identity.emails.join(", ")} is outside auth.sso.allowedDomains: refused`);
      throw AuthFailure.forbidden();
    }
    return this.#store(async () => {
      let user: UserRow | undefined;
      let email = allowed[0]!;
      for (const candidate of allowed) {
        const found = await findUsersByEmail(db, candidate);
        if (found.length > 1) {
          log.warn(`sso ${provider.id}: ${found.length} users have the email ${candidate}: refused until one of them has another`);
          throw AuthFailure.forbidden();
        }
        if (found[0]) {
          [user, email] = [found[0], candidate];
          break;
        }
      }
      if (user && user.status !== "active") return this.#refuse(provider.id, `the user ${user.id} (${email}) is suspended`);
      if (!user && !settings.autoCreate) {
        log.warn(`sso ${provider.id}: no user has the email ${allowed.join(" or ")}, and auth.sso.autoCreate is off: refused`);
        throw AuthFailure.forbidden();
      }
      const token = newToken(SESSION_TOKEN_PREFIX);
      const now = Date.now();
      const userId = user?.id ?? newUuid();
      const session = { id: newUuid(), userId, hash: hashToken(token), provider: provider.id, createdAt: now, expiresAt: now + settings.sessionDays * DAY_MS };
      const at = new Date(now).toISOString();
      await startSession(db, {
        session,
        identity: { userId, provider: provider.id, subject: identity.subject, email, lastSignInAt: now },
        ...(user ? {} : { newUser: { id: userId, email, displayName: identity.name ?? null, status: "active", role: "member", createdAt: at, updatedAt: at } }),
      });
      log.info(`sso ${provider.id}: ${email} signed in as user ${userId}${user ? "" : " (created as a member)"}`, { provider: provider.id, user_id: userId, created: !user });
      return { token, userId };
    });
  }

  #provider(id: string): SsoProvider {
    const provider = this.#providers.get(id);
    if (!provider) throw new NotFound(`No sign-in provider ${id} is configured.`);
    return provider;
  }

  #refuse(id: string, why: string): never {
    this.deps.log.warn(`sso ${id}: sign-in refused: ${why}`);
    throw AuthFailure.unauthorized();
  }

  /** The token store's work; when it cannot be used, the auth layer's plain-text 503. */
  async #store<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof AuthFailure) throw e;
      this.deps.log.error(`sso: the token store failed: ${(e as Error).message}`);
      throw AuthFailure.storeDown();
    }
  }
}
