// Identity providers on loopback for the single sign-on tests: a small OpenID Connect issuer
// (discovery, JWKS, authorize, token, userinfo) whose ID tokens are signed with jose and can
// be made wrong on purpose, and a stand-in for GitHub's OAuth and user endpoints. Both sign
// the person in at once (no login page: tests/support/oidc-provider.ts has a real one) and
// check the client's secret, the redirect URI and the PKCE verifier as a real one does.
import { createHash, randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
const random = () => randomBytes(16).toString("hex");
const form = async (req: Request) => new URLSearchParams(await req.text());

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce?: string;
}

export interface OidcPerson {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/** What the next ID tokens get wrong; tests set it and reset it. */
export interface Tamper {
  /** A nonce other than the one the client sent. */
  nonce?: string;
  /** Signed with a key that is not in the JWKS. */
  foreignKey?: boolean;
  /** Expired this many seconds ago. */
  expiredS?: number;
  iss?: string;
  aud?: string;
}

export interface FakeOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next. */
  person: OidcPerson;
  tamper: Tamper;
  /** Keep the email claims out of the ID token (then only the userinfo endpoint says them). */
  emailOnlyInUserinfo: boolean;
  log: { authorizations: URLSearchParams[]; tokenRequests: number; refusedTokenRequests: string[]; userinfo: number };
  stop(): void;
}

export async function startFakeOidc(opts: { clientId?: string; clientSecret?: string; person?: OidcPerson } = {}): Promise<FakeOidc> {
  const key = await generateKeyPair("RS256");
  const foreign = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(key.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const grants = new Map<string, Grant & { person: OidcPerson }>();
  const accessTokens = new Map<string, OidcPerson>();
  const idp: FakeOidc = {
    issuer: "",
    clientId: opts.clientId ?? "service-client",
    clientSecret: opts.clientSecret ?? "service-secret-0123456789",
    person: opts.person ?? { sub: "alice-sub", email: "alice@example.com", email_verified: true, name: "Alice" },
    tamper: {},
    emailOnlyInUserinfo: false,
    log: { authorizations: [], tokenRequests: 0, refusedTokenRequests: [], userinfo: 0 },
    stop: () => server.stop(true),
  };
  const refuse = (why: string, status = 400) => {
    idp.log.refusedTokenRequests.push(why);
    return Response.json({ error: "invalid_grant", error_description: why }, { status });
  };
  const sign = (claims: Record<string, unknown>, signer: CryptoKey) =>
    new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1", typ: "JWT" }).sign(signer);

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/.well-known/openid-configuration":
          return Response.json({
            issuer: idp.issuer,
            authorization_endpoint: `${idp.issuer}/authorize`,
            token_endpoint: `${idp.issuer}/token`,
            userinfo_endpoint: `${idp.issuer}/userinfo`,
            jwks_uri: `${idp.issuer}/jwks`,
            response_types_supported: ["code"],
            subject_types_supported: ["public"],
            id_token_signing_alg_values_supported: ["RS256"],
            code_challenge_methods_supported: ["S256"],
            token_endpoint_auth_methods_supported: ["client_secret_basic"],
          });
        case "/jwks":
          return Response.json({ keys: [jwk] });
        case "/authorize": {
          const q = url.searchParams;
          idp.log.authorizations.push(q);
          const redirect = q.get("redirect_uri")!;
          const code = random();
          grants.set(code, { clientId: q.get("client_id")!, redirectUri: redirect, challenge: q.get("code_challenge") ?? "", nonce: q.get("nonce") ?? undefined, person: { ...idp.person } });
          const back = new URL(redirect);
          back.searchParams.set("code", code);
          back.searchParams.set("state", q.get("state") ?? "");
          return new Response(null, { status: 302, headers: { location: back.href } });
        }
        case "/token": {
          idp.log.tokenRequests++;
          const basic = /^Basic (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
          const [id, secret] = basic ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent) : [];
          if (id !== idp.clientId || secret !== idp.clientSecret) return refuse("client authentication failed", 401);
          const body = await form(req);
          const grant = grants.get(body.get("code") ?? "");
          grants.delete(body.get("code") ?? "");
          if (!grant) return refuse("unknown or used code");
          if (grant.redirectUri !== body.get("redirect_uri")) return refuse("redirect_uri differs");
          if (!grant.challenge || s256(body.get("code_verifier") ?? "") !== grant.challenge) return refuse("PKCE verifier does not match");
          const now = Math.floor(Date.now() / 1000);
          const { person } = grant;
          const exp = idp.tamper.expiredS ? now - idp.tamper.expiredS : now + 300;
          const claims: Record<string, unknown> = {
            iss: idp.tamper.iss ?? idp.issuer,
            aud: idp.tamper.aud ?? idp.clientId,
            sub: person.sub,
            iat: idp.tamper.expiredS ? exp - 300 : now,
            exp,
            ...(grant.nonce || idp.tamper.nonce ? { nonce: idp.tamper.nonce ?? grant.nonce } : {}),
            ...(idp.emailOnlyInUserinfo ? {} : { email: person.email, email_verified: person.email_verified, name: person.name }),
          };
          const accessToken = random();
          accessTokens.set(accessToken, person);
          return Response.json({
            access_token: accessToken,
            token_type: "Bearer",
            expires_in: 300,
            id_token: await sign(claims, idp.tamper.foreignKey ? foreign.privateKey : key.privateKey),
          });
        }
        case "/userinfo": {
          idp.log.userinfo++;
          const person = accessTokens.get(/^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "");
          if (!person) return new Response(null, { status: 401 });
          return Response.json(person);
        }
      }
      return new Response("not found", { status: 404 });
    },
  });
  idp.issuer = `http://127.0.0.1:${server.port}`;
  return idp;
}

export interface GithubPerson {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
}

export interface FakeGithub {
  url: string;
  clientId: string;
  clientSecret: string;
  person: GithubPerson;
  /** The `auth.sso.github` settings that point at this stand-in. */
  settings(): { clientId: string; clientSecret: string; authorizeUrl: string; tokenUrl: string; apiUrl: string };
  log: { authorizations: URLSearchParams[]; refused: string[]; apiCalls: string[] };
  stop(): void;
}

/** GitHub's OAuth app endpoints and the two REST calls a sign-in makes. */
export function startFakeGithub(opts: { person?: GithubPerson } = {}): FakeGithub {
  const grants = new Map<string, Grant & { person: GithubPerson }>();
  const tokens = new Map<string, GithubPerson>();
  const gh: FakeGithub = {
    url: "",
    clientId: "Iv1.fakeclient",
    clientSecret: "github-secret-0123456789",
    person: opts.person ?? {
      id: 4242,
      login: "bob",
      name: "Bob",
      emails: [
        { email: "bob@users.noreply.github.com", primary: false, verified: true, visibility: null },
        { email: "bob@example.com", primary: true, verified: true, visibility: "public" },
        { email: "bob@unverified.example", primary: false, verified: false, visibility: null },
      ],
    },
    settings: () => ({
      clientId: gh.clientId,
      clientSecret: gh.clientSecret,
      authorizeUrl: `${gh.url}/login/oauth/authorize`,
      tokenUrl: `${gh.url}/login/oauth/access_token`,
      apiUrl: `${gh.url}/api`,
    }),
    log: { authorizations: [], refused: [], apiCalls: [] },
    stop: () => server.stop(true),
  };
  // GitHub answers a bad code with HTTP 200 and an error body
  const refuse = (why: string) => (gh.log.refused.push(why), Response.json({ error: "bad_verification_code", error_description: why }));
  const person = (req: Request) => tokens.get(/^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "");

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/login/oauth/authorize") {
        const q = url.searchParams;
        gh.log.authorizations.push(q);
        const code = random();
        grants.set(code, { clientId: q.get("client_id")!, redirectUri: q.get("redirect_uri")!, challenge: q.get("code_challenge") ?? "", person: structuredClone(gh.person) });
        const back = new URL(q.get("redirect_uri")!);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
        const body = await form(req);
        if (body.get("client_id") !== gh.clientId || body.get("client_secret") !== gh.clientSecret) return refuse("client authentication failed");
        const grant = grants.get(body.get("code") ?? "");
        grants.delete(body.get("code") ?? "");
        if (!grant) return refuse("unknown or used code");
        if (grant.redirectUri !== body.get("redirect_uri")) return refuse("redirect_uri differs");
        if (!grant.challenge || s256(body.get("code_verifier") ?? "") !== grant.challenge) return refuse("PKCE verifier does not match");
        const token = `gho_${random()}`;
        tokens.set(token, grant.person);
        return Response.json({ access_token: token, token_type: "bearer", scope: "read:user,user:email" });
      }
      if (url.pathname === "/api") return Response.json({ current_user_url: `${gh.url}/api/user` });
      if (url.pathname === "/api/user" || url.pathname === "/api/user/emails") {
        gh.log.apiCalls.push(url.pathname);
        if (!req.headers.get("user-agent")) return new Response("a User-Agent is required", { status: 403 });
        const p = person(req);
        if (!p) return Response.json({ message: "Bad credentials" }, { status: 401 });
        return Response.json(url.pathname === "/api/user" ? { id: p.id, login: p.login, name: p.name } : p.emails);
      }
      return new Response("not found", { status: 404 });
    },
  });
  gh.url = `http://127.0.0.1:${server.port}`;
  return gh;
}
