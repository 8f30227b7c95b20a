import type { Config } from "../../config/schema";
import { githubProvider } from "./github";
import { oidcProvider } from "./oidc";
import type { SsoProvider } from "./provider";

export type SsoSettings = Config["auth"]["sso"];

export const GOOGLE_ISSUER = "https://accounts.google.com";

/** The providers `auth.sso` configures, in the order the sign-in card shows them. */
export function configuredProviders(sso: SsoSettings): SsoProvider[] {
  const out: SsoProvider[] = [];
  if (sso.google) out.push(oidcProvider("google", sso.google.name ?? "Google", { ...sso.google, issuer: sso.google.issuer ?? GOOGLE_ISSUER }));
  if (sso.github) out.push(githubProvider(sso.github.name ?? "GitHub", sso.github));
  if (sso.oidc) out.push(oidcProvider("oidc", sso.oidc.name ?? "Single sign-on", sso.oidc));
  return out;
}

/** Where the provider sends the browser back: `<publicUrl>/auth/sso/<id>/callback`. */
export const redirectUri = (publicUrl: string, id: string) => `${publicUrl.replace(/\/+$/, "")}/auth/sso/${id}/callback`;
