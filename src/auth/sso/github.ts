import * as client from "openid-client";
import { PROVIDER_TIMEOUT_S, type FlowChecks, type Identity, type SsoProvider } from "./provider";

export interface GithubSettings {
  clientId: string;
  clientSecret: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  apiUrl?: string;
}

export const GITHUB = {
  authorizeUrl: "https://github.com/login/oauth/authorize",
  tokenUrl: "https://github.com/login/oauth/access_token",
  apiUrl: "https://api.github.com",
};

/** GitHub: OAuth 2.0 (no ID token), then the person's account and verified emails from its API. */
export function githubProvider(name: string, s: GithubSettings): SsoProvider {
  const authorizeUrl = s.authorizeUrl ?? GITHUB.authorizeUrl;
  const tokenUrl = s.tokenUrl ?? GITHUB.tokenUrl;
  const apiUrl = (s.apiUrl ?? GITHUB.apiUrl).replace(/\/+$/, "");
  const config = new client.Configuration(
    { issuer: new URL(authorizeUrl).origin, authorization_endpoint: authorizeUrl, token_endpoint: tokenUrl },
    s.clientId,
    undefined,
    client.ClientSecretPost(s.clientSecret),
  );
  config.timeout = PROVIDER_TIMEOUT_S;
  if ([authorizeUrl, tokenUrl].some((u) => u.startsWith("http:"))) client.allowInsecureRequests(config);

  const api = async <T>(path: string, token: string): Promise<T> => {
    const res = await fetch(`${apiUrl}${path}`, {
      headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json", "user-agent": "service", "x-github-api-version": "2022-11-28" },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_S * 1000),
      redirect: "error",
    });
    if (!res.ok) throw new Error(`GitHub's ${path} answered HTTP ${res.status}`);
    return (await res.json()) as T;
  };

  return {
    id: "github",
    name,
    async authorizationUrl(redirectUri: string, checks: FlowChecks) {
      return client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "read:user user:email",
        state: checks.state,
        code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
        code_challenge_method: "S256",
        allow_signup: "false",
      });
    },
    async finish(callbackUrl: URL, checks: FlowChecks): Promise<Identity> {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, idTokenExpected: false });
      const user = await api<{ id?: unknown; login?: unknown; name?: unknown }>("/user", tokens.access_token);
      const emails = await api<{ email?: unknown; primary?: unknown; verified?: unknown }[]>("/user/emails", tokens.access_token);
      if (typeof user.id !== "number" && typeof user.id !== "string") throw new Error("GitHub's /user has no id");
      if (!Array.isArray(emails)) throw new Error("GitHub's /user/emails is not a list");
      const named = emails.filter((e) => typeof e.email === "string").sort((a, b) => Number(b.primary === true) - Number(a.primary === true));
      const display = typeof user.name === "string" && user.name ? user.name : typeof user.login === "string" ? user.login : undefined;
      return {
        subject: String(user.id),
        emails: named.filter((e) => e.verified === true).map((e) => e.email as string),
        unverified: named.filter((e) => e.verified !== true).map((e) => e.email as string),
        ...(display ? { name: display } : {}),
      };
    },
  };
}
