// `service doctor`'s lines for single sign-on: one per configured provider. An OpenID Connect
// provider's discovery document is fetched and checked as a sign-in would use it; GitHub has
// none, so its API is asked instead. Each line says the redirect URI to register.
import type { Check } from "../../cli/doctor";
import type { Config } from "../../config/schema";
import { GITHUB } from "./github";
import { discover, type OidcSettings } from "./oidc";
import { failureReason, PROVIDER_TIMEOUT_S } from "./provider";
import { GOOGLE_ISSUER, redirectUri } from "./providers";

export async function ssoChecks(config: Config): Promise<Check[]> {
  const sso = config.auth.sso;
  const { host, port } = config.gateway;
  const base = sso.publicUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  // a redirect URI browsers cannot reach, or one Google refuses, is a warning on every line
  const wildcard = !sso.publicUrl && ["0.0.0.0", "::", "[::]"].includes(host);
  const where = (id: string) =>
    wildcard ? `; set auth.sso.publicUrl: the gateway listens on ${host}, which is no address for a browser to come back to` : `; redirect URI ${redirectUri(base, id)}`;
  const checks = await Promise.all([
    sso.google && oidcCheck("google", { ...sso.google, issuer: sso.google.issuer ?? GOOGLE_ISSUER }, where("google")),
    sso.github && githubCheck(sso.github.apiUrl ?? GITHUB.apiUrl, where("github")),
    sso.oidc && oidcCheck("oidc", sso.oidc, where("oidc")),
  ]);
  return checks
    .filter((c): c is Check => !!c)
    .map((c) => {
      if (c.verdict !== "ok") return c;
      if (wildcard) return { ...c, verdict: "warn" };
      const loopback = /^http:\/\/(localhost|127\.[0-9.]+|\[::1\])(:|\/|$)/.test(base);
      if (c.what === "sso google" && base.startsWith("http:") && !loopback) {
        return { ...c, verdict: "warn", detail: `${c.detail} (Google accepts plain-http redirect URIs on localhost only: serve it over https)` };
      }
      return c;
    });
}

async function oidcCheck(id: string, settings: OidcSettings, tail: string): Promise<Check> {
  const what = `sso ${id}`;
  let meta;
  try {
    meta = (await discover(settings)).serverMetadata();
  } catch (e) {
    return { verdict: "fail", what, detail: `${settings.issuer}: discovery failed: ${failureReason(e)}` };
  }
  if (!meta.jwks_uri) return { verdict: "fail", what, detail: `${settings.issuer}: the discovery document names no jwks_uri, so ID token signatures cannot be checked` };
  const algs = meta.id_token_signing_alg_values_supported;
  if (algs && !algs.some((a) => a !== "none" && !a.startsWith("HS"))) {
    return { verdict: "fail", what, detail: `${settings.issuer}: ID tokens are signed with ${algs.join(", ")} only; give the client a signing key (RS256 or ES256)` };
  }
  const pkce = meta.code_challenge_methods_supported;
  if (pkce && !pkce.includes("S256")) return { verdict: "fail", what, detail: `${settings.issuer}: PKCE S256 is not supported (it lists ${pkce.join(", ")})` };
  return { verdict: "ok", what, detail: `${meta.issuer}: discovery document ok${tail}` };
}

async function githubCheck(apiUrl: string, tail: string): Promise<Check> {
  const what = "sso github";
  try {
    const res = await fetch(apiUrl, { headers: { accept: "application/vnd.github+json", "user-agent": "service" }, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_S * 1000) });
    if (!res.ok) return { verdict: "fail", what, detail: `${apiUrl} answered HTTP ${res.status}` };
    return { verdict: "ok", what, detail: `${apiUrl} answers (OAuth 2.0, no discovery document)${tail}` };
  } catch (e) {
    return { verdict: "fail", what, detail: `${apiUrl} could not be reached: ${(e as Error).message}` };
  }
}
