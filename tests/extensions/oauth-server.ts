// A small OAuth 2 authorization server on loopback for the tests: authorization code with
// PKCE (S256 only), refresh tokens, and a resource (`/me`) that wants a valid access token.
import { createHash, randomBytes } from "node:crypto";
import { writeWasmExtension } from "./support";

export const CLIENT_ID = "test-client";

const b64url = (b: Buffer) => b.toString("base64url");
const newToken = (kind: string) => `${kind}-${b64url(randomBytes(24))}`;

export interface AuthorizationServer {
  origin: string;
  /** Lifetime (s) of the access tokens it issues next. */
  expiresIn: number;
  /** When true, refresh requests are refused (a revoked grant). */
  refuseRefresh: boolean;
  /** Access token → the user it was issued for. */
  readonly accessTokens: Map<string, string>;
  /** Refresh token → the user it was issued for. */
  readonly refreshTokens: Map<string, string>;
  readonly log: { authorizations: URLSearchParams[]; tokenRequests: URLSearchParams[]; meAuth: string[]; refreshes: number; badVerifiers: number };
  /** The user whose consent the authorize endpoint gives next. */
  user: string;
  stop(): void;
}

export function startAuthorizationServer(): AuthorizationServer {
  const codes = new Map<string, { challenge: string; redirectUri: string; user: string; scope: string }>();
  const refreshTokens = new Map<string, string>();
  const s: AuthorizationServer = {
    origin: "",
    expiresIn: 3600,
    refuseRefresh: false,
    accessTokens: new Map(),
    refreshTokens,
    log: { authorizations: [], tokenRequests: [], meAuth: [], refreshes: 0, badVerifiers: 0 },
    user: "alice",
    stop: () => server.stop(true),
  };
  const issue = (user: string) => {
    const access = newToken("at");
    const refresh = newToken("rt");
    s.accessTokens.set(access, user);
    refreshTokens.set(refresh, user);
    return Response.json({ access_token: access, refresh_token: refresh, token_type: "Bearer", expires_in: s.expiresIn, scope: "profile read" });
  };
  const refuse = (error: string, status = 400) => Response.json({ error, error_description: `refused: ${error}` }, { status });

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/authorize") {
        const q = url.searchParams;
        s.log.authorizations.push(q);
        const redirect = q.get("redirect_uri");
        if (q.get("client_id") !== CLIENT_ID || !redirect || q.get("response_type") !== "code") return new Response("bad request", { status: 400 });
        if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) return new Response("PKCE required", { status: 400 });
        const code = newToken("code");
        codes.set(code, { challenge: q.get("code_challenge")!, redirectUri: redirect, user: s.user, scope: q.get("scope") ?? "" });
        const back = new URL(redirect);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: back.toString() } });
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const form = new URLSearchParams(await req.text());
        s.log.tokenRequests.push(form);
        if (form.get("client_id") !== CLIENT_ID) return refuse("invalid_client", 401);
        if (form.get("grant_type") === "authorization_code") {
          const grant = codes.get(form.get("code") ?? "");
          if (!grant) return refuse("invalid_grant");
          codes.delete(form.get("code")!);
          if (form.get("redirect_uri") !== grant.redirectUri) return refuse("invalid_grant");
          const verifier = form.get("code_verifier") ?? "";
          if (b64url(createHash("sha256").update(verifier).digest()) !== grant.challenge) {
            s.log.badVerifiers++;
            return refuse("invalid_grant");
          }
          return issue(grant.user);
        }
        if (form.get("grant_type") === "refresh_token") {
          const user = refreshTokens.get(form.get("refresh_token") ?? "");
          if (!user || s.refuseRefresh) return refuse("invalid_grant");
          s.log.refreshes++;
          refreshTokens.delete(form.get("refresh_token")!);
          return issue(user);
        }
        return refuse("unsupported_grant_type");
      }
      if (url.pathname === "/me") {
        const auth = req.headers.get("authorization") ?? "";
        s.log.meAuth.push(auth);
        const user = s.accessTokens.get(auth.replace(/^Bearer /, ""));
        return user ? Response.json({ user }) : Response.json({ error: "invalid_token" }, { status: 401 });
      }
      return new Response("not found", { status: 404 });
    },
  });
  s.origin = `http://127.0.0.1:${server.port}`;
  return s;
}

/** Writes a `github` WebAssembly extension whose oauth2 credentials and `/me` call use `as`. */
export function writeGithubExtension(dir: string, as: AuthorizationServer, scopes = ["profile", "read"]): string {
  return writeWasmExtension(dir, {
    name: "github",
    urls: { me: `${as.origin}/me` },
    allow: [new URL(as.origin).host],
    credentials: { type: "oauth2", authorizeUrl: `${as.origin}/authorize`, tokenUrl: `${as.origin}/token`, clientId: CLIENT_ID, scopes, hosts: [new URL(as.origin).host] },
  });
}
