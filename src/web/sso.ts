// Single sign-on on the sign-in card: a button per identity provider the service offers. The
// provider sends the browser back to /login#token=…, which session.ts keeps like any token.
import { fill, h } from "./dom";

interface Provider {
  id: string;
  name: string;
}

/** The card's provider buttons; empty (and invisible) when the service offers none. */
export function ssoButtons(): HTMLElement {
  const box = h("div", { class: "sso-providers" });
  void (async () => {
    try {
      const res = await fetch("/auth/sso/providers");
      if (!res.ok) return;
      const { providers } = (await res.json()) as { providers: Provider[] };
      if (!providers.length) return;
      fill(
        box,
        ...providers.map((p) => h("a", { class: "button sso-button", href: `/auth/sso/${encodeURIComponent(p.id)}/start`, text: `Sign in with ${p.name}` })),
        h("p", { class: "sso-or muted small", text: "or with a token" }),
      );
    } catch {
      // the token form still works
    }
  })();
  return box;
}

/** Ends the token's session on the service when it is a signed-in session (other tokens stay valid). */
export function endSession(token: string | null): void {
  if (!token) return;
  void fetch("/auth/logout", { method: "POST", headers: { authorization: `Bearer ${token}` }, keepalive: true }).catch(() => {});
}
