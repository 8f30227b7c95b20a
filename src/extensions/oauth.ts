import { randomBytes } from "node:crypto";
import type { OAuth2Credentials } from "./manifest";

const TOKEN_TIMEOUT_MS = 15_000;

/** What is kept (encrypted) of a user's grant. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  scope?: string;
  /** ms since the epoch; absent when the server gave no lifetime. */
  expires_at?: number;
  /** When it was issued (ms since the epoch). */
  obtained_at?: number;
}

export class OAuthError extends Error {
  override name = "OAuthError";
}

const base64url = (b: Buffer) => b.toString("base64url");

export const newState = () => base64url(randomBytes(32));
/** RFC 7636: 43 characters of base64url, and its S256 challenge. */
export const newVerifier = () => base64url(randomBytes(32));
export const challengeOf = (verifier: string) => base64url(Bun.CryptoHasher.hash("sha256", verifier));
export const hashState = (state: string) => Bun.CryptoHasher.hash("sha256", state, "hex");

export function authorizeUrl(c: OAuth2Credentials, p: { redirectUri: string; state: string; verifier: string }): string {
  const url = new URL(c.authorizeUrl);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", c.clientId);
  url.searchParams.set("redirect_uri", p.redirectUri);
  if (c.scopes.length) url.searchParams.set("scope", c.scopes.join(" "));
  url.searchParams.set("state", p.state);
  url.searchParams.set("code_challenge", challengeOf(p.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  return url.toString();
}

/** The authorization code for tokens (RFC 6749 §4.1.3 with the PKCE verifier). */
export function exchangeCode(c: OAuth2Credentials, p: { code: string; redirectUri: string; verifier: string }): Promise<TokenSet> {
  return tokenRequest(c, { grant_type: "authorization_code", code: p.code, redirect_uri: p.redirectUri, code_verifier: p.verifier });
}

/** A new access token for a refresh token; the old refresh token stays when no new one comes. */
export async function refreshTokens(c: OAuth2Credentials, tokens: TokenSet): Promise<TokenSet> {
  if (!tokens.refresh_token) throw new OAuthError("the access token expired and there is no refresh token");
  const fresh = await tokenRequest(c, { grant_type: "refresh_token", refresh_token: tokens.refresh_token });
  return { ...fresh, refresh_token: fresh.refresh_token ?? tokens.refresh_token };
}

async function tokenRequest(c: OAuth2Credentials, params: Record<string, string>): Promise<TokenSet> {
  const body = new URLSearchParams({ ...params, client_id: c.clientId, ...(c.clientSecret ? { client_secret: c.clientSecret } : {}) });
  let res: Response;
  try {
    res = await fetch(c.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch (e) {
    throw new OAuthError(`the token endpoint could not be reached: ${(e as Error).message}`);
  }
  const text = await res.text();
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // some providers answer form-encoded unless told otherwise
    data = Object.fromEntries(new URLSearchParams(text));
  }
  if (!res.ok || typeof data.access_token !== "string" || !data.access_token) {
    const reason = typeof data.error === "string" ? `${data.error}${typeof data.error_description === "string" ? `: ${data.error_description}` : ""}` : `HTTP ${res.status}`;
    throw new OAuthError(`the token endpoint refused: ${reason}`);
  }
  const expiresIn = Number(data.expires_in);
  const now = Date.now();
  return {
    access_token: data.access_token,
    ...(typeof data.refresh_token === "string" ? { refresh_token: data.refresh_token } : {}),
    ...(typeof data.token_type === "string" ? { token_type: data.token_type } : {}),
    ...(typeof data.scope === "string" ? { scope: data.scope } : {}),
    ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expires_at: now + expiresIn * 1000, obtained_at: now } : {}),
  };
}
