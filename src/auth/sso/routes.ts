import { Elysia } from "elysia";
import type { Services } from "../../services";
import { newToken } from "../tokens";

/** Ties a sign-in's callback to the browser that started it (no one else's code signs you in). */
const COOKIE = "service_sso";
const COOKIE_RE = new RegExp(`(?:^|;\\s*)${COOKIE}=([0-9a-f]{64})(?:;|$)`);

const NO_STORE = { "cache-control": "no-store", "referrer-policy": "no-referrer" };

const redirect = (location: string, headers: Record<string, string> = {}) => new Response(null, { status: 302, headers: { location, ...NO_STORE, ...headers } });

/**
 * Single sign-on: the providers the sign-in card offers, the way to each and back, and signing
 * out. All public but logout: the callback is checked by its state, its cookie and the
 * provider's answer. Refusals are the auth layer's plain text (401, 403, 503).
 */
export function ssoRoutes(s: Services) {
  return new Elysia({ name: "sso" })
    .get("/auth/sso/providers", () => ({ providers: s.sso.list() }))
    .get("/auth/sso/:provider/start", async ({ params, request }) => {
      const binding = COOKIE_RE.exec(request.headers.get("cookie") ?? "")?.[1] ?? newToken();
      const to = await s.sso.start(params.provider, binding);
      const secure = s.sso.redirectUri(params.provider).startsWith("https:") ? "; Secure" : "";
      return redirect(to.href, { "set-cookie": `${COOKIE}=${binding}; Path=/auth/sso/; Max-Age=600; HttpOnly; SameSite=Lax${secure}` });
    })
    .get("/auth/sso/:provider/callback", async ({ params, request }) => {
      const binding = COOKIE_RE.exec(request.headers.get("cookie") ?? "")?.[1];
      const { token } = await s.sso.finish(params.provider, new URL(request.url).searchParams, binding);
      // in the fragment: it never reaches a server, a log or a Referer; the web UI takes it out at once
      return redirect(`/login#token=${token}`);
    })
    .post("/auth/logout", async ({ request }) => {
      await s.sso.logout(request.headers.get("authorization"));
      return new Response(null, { status: 204 });
    });
}
