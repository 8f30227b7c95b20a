// The two small pages of the OAuth flow. They are served by the gateway itself, so they work
// whatever the web UI shows: one starts a connection, one ends it.

/** The web UI keeps its sign-in token here (src/web/session.ts). */
const TOKEN_KEY = "service.token";

const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(status: number, title: string, body: string, script = false): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}${script ? `<script src="/extensions/connect.js"></script>` : ""}</body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CSP,
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    },
  });
}

/** The end of the flow: connected, or why not. */
export function resultPage(status: number, title: string, message: string): Response {
  return page(status, title, `<p>${escapeHtml(message)}</p><p><a href="/">Back to the chat</a></p>`);
}

/** Connects an extension with the browser's web UI sign-in, then goes to the authorization server. */
export function connectPage(name: string): Response {
  return page(200, `Connect ${name}`, `<p id="status">Connecting the extension <b>${escapeHtml(name)}</b>…</p>`, true);
}

export const CONNECT_SCRIPT = `(async () => {
  const status = document.getElementById("status");
  const name = decodeURIComponent(location.pathname.split("/").pop() || "");
  const token = localStorage.getItem(${JSON.stringify(TOKEN_KEY)});
  if (!token) {
    status.innerHTML = 'Sign in to the web UI first (<a href="/login">sign in</a>), then open this link again.';
    return;
  }
  try {
    const res = await fetch("/api/extensions/" + encodeURIComponent(name) + "/connect", {
      method: "POST",
      headers: { authorization: "Bearer " + token },
    });
    const body = await res.json();
    if (!res.ok) throw new Error((body.error && body.error.message) || ("HTTP " + res.status));
    location.assign(body.authorize_url);
  } catch (e) {
    status.textContent = "Could not connect " + name + ": " + e.message;
  }
})();
`;
