import * as client from "openid-client";
import { PROVIDER_TIMEOUT_S, type FlowChecks, type Identity, type SsoProvider } from "./provider";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

const SCOPE = "openid email profile";

/**
 * The issuer's configuration from its discovery document. The ID token's signature is checked
 * against the issuer's keys (JWKS) too, which the library skips by default for the code flow
 * (the token comes straight from the token endpoint); and a plain-http issuer (a LAN's
 * Authelia) is allowed, which is why that check matters.
 */
export async function discover(s: OidcSettings): Promise<client.Configuration> {
  const issuer = new URL(s.issuer);
  const execute = [client.enableNonRepudiationChecks, ...(issuer.protocol === "http:" ? [client.allowInsecureRequests] : [])];
  const config = await client.discovery(issuer, s.clientId, undefined, client.ClientSecretBasic(s.clientSecret), { execute, timeout: PROVIDER_TIMEOUT_S });
  config.timeout = PROVIDER_TIMEOUT_S;
  return config;
}

/** An OpenID Connect provider found by discovery (Google is one with a fixed issuer). */
export function oidcProvider(id: "google" | "oidc", name: string, settings: OidcSettings): SsoProvider {
  let configuration: Promise<client.Configuration> | undefined;
  // discovered once; a failure is tried again at the next sign-in
  const config = () => {
    configuration ??= discover(settings);
    configuration.catch(() => (configuration = undefined));
    return configuration;
  };
  return {
    id,
    name,
    async authorizationUrl(redirectUri: string, checks: FlowChecks) {
      return client.buildAuthorizationUrl(await config(), {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
        code_challenge_method: "S256",
      });
    },
    async finish(callbackUrl: URL, checks: FlowChecks): Promise<Identity> {
      const c = await config();
      const tokens = await client.authorizationCodeGrant(c, callbackUrl, {
        pkceCodeVerifier: checks.verifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      // some providers (Authelia since 4.39) give the email and whether it is verified only at userinfo
      const inIdToken = typeof idToken.email === "string" && idToken.email_verified !== undefined;
      const claims: Record<string, unknown> = inIdToken ? idToken : { ...(await client.fetchUserInfo(c, tokens.access_token, idToken.sub)), sub: idToken.sub };
      const email = typeof claims.email === "string" ? [claims.email] : [];
      const verified = claims.email_verified === true || claims.email_verified === "true";
      const name = typeof claims.name === "string" ? claims.name : typeof claims.preferred_username === "string" ? claims.preferred_username : undefined;
      return { subject: idToken.sub, emails: verified ? email : [], unverified: verified ? [] : email, ...(name ? { name } : {}) };
    },
  };
}
