// `service doctor`'s single sign-on lines, in process, against providers on loopback: one line
// per provider, its discovery document checked, the redirect URI to register said.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ssoChecks } from "../../src/auth/sso/doctor";
import { DEFAULTS, type Config } from "../../src/config/schema";
import { startFakeGithub, startFakeOidc, type FakeGithub, type FakeOidc } from "../support/fake-idp";

let idp: FakeOidc;
let gh: FakeGithub;
/** An issuer whose ID tokens can only be checked with the client secret (Authentik without a signing key). */
let hsOnly: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  idp = await startFakeOidc();
  gh = startFakeGithub();
  hsOnly = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      const issuer = new URL(req.url).origin;
      return Response.json({ issuer, authorization_endpoint: `${issuer}/a`, token_endpoint: `${issuer}/t`, jwks_uri: `${issuer}/j`, id_token_signing_alg_values_supported: ["HS256"] });
    },
  });
});
afterAll(() => {
  idp.stop();
  gh.stop();
  hsOnly.stop(true);
});

const config = (sso: Partial<Config["auth"]["sso"]>, gateway: Partial<Config["gateway"]> = {}): Config => ({
  ...DEFAULTS,
  gateway: { ...DEFAULTS.gateway, ...gateway },
  auth: { sso: { ...DEFAULTS.auth.sso, ...sso } },
});
const oidc = () => ({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret });

describe("doctor's sign-in lines", () => {
  test("nothing configured: no line", async () => {
    expect(await ssoChecks(DEFAULTS)).toEqual([]);
  });

  test("one line per provider, each with the redirect URI to register", async () => {
    const checks = await ssoChecks(config({ google: { ...oidc(), issuer: idp.issuer }, github: gh.settings(), oidc: oidc() }));
    expect(checks).toEqual([
      { verdict: "ok", what: "sso google", detail: `${idp.issuer}: discovery document ok; redirect URI http://127.0.0.1:3000/auth/sso/google/callback` },
      { verdict: "ok", what: "sso github", detail: `${gh.url}/api answers (OAuth 2.0, no discovery document); redirect URI http://127.0.0.1:3000/auth/sso/github/callback` },
      { verdict: "ok", what: "sso oidc", detail: `${idp.issuer}: discovery document ok; redirect URI http://127.0.0.1:3000/auth/sso/oidc/callback` },
    ]);
  });

  test("an issuer that does not answer, one whose document names another issuer, and one with HS256 only all fail", async () => {
    const dead = "http://127.0.0.1:1";
    const [down] = await ssoChecks(config({ oidc: { ...oidc(), issuer: dead } }));
    expect(down).toMatchObject({ verdict: "fail", what: "sso oidc" });
    expect(down!.detail).toStartWith(`${dead}: discovery failed: `);
    const [other] = await ssoChecks(config({ oidc: { ...oidc(), issuer: `${idp.issuer}/realms/x` } }));
    expect(other).toMatchObject({ verdict: "fail" });
    const [hs] = await ssoChecks(config({ oidc: { ...oidc(), issuer: `http://127.0.0.1:${hsOnly.port}` } }));
    expect(hs).toMatchObject({ verdict: "fail", detail: `http://127.0.0.1:${hsOnly.port}: ID tokens are signed with HS256 only; give the client a signing key (RS256 or ES256)` });
    const [gone] = await ssoChecks(config({ github: { ...gh.settings(), apiUrl: `${gh.url}/nothing` } }));
    expect(gone).toMatchObject({ verdict: "fail", what: "sso github", detail: `${gh.url}/nothing answered HTTP 404` });
  });

  test("a gateway on 0.0.0.0 without publicUrl, and Google behind plain http on the LAN, are warnings", async () => {
    const [wild] = await ssoChecks(config({ oidc: oidc() }, { host: "0.0.0.0" }));
    expect(wild).toMatchObject({ verdict: "warn", detail: `${idp.issuer}: discovery document ok; set auth.sso.publicUrl: the gateway listens on 0.0.0.0, which is no address for a browser to come back to` });
    const [lan] = await ssoChecks(config({ google: { ...oidc(), issuer: idp.issuer }, publicUrl: "http://192.168.1.20:3000" }));
    expect(lan!.verdict).toBe("warn");
    expect(lan!.detail).toContain("redirect URI http://192.168.1.20:3000/auth/sso/google/callback (Google accepts plain-http redirect URIs on localhost only");
    const [https] = await ssoChecks(config({ google: { ...oidc(), issuer: idp.issuer }, publicUrl: "https://agent.example.com/" }));
    expect(https).toMatchObject({ verdict: "ok", detail: `${idp.issuer}: discovery document ok; redirect URI https://agent.example.com/auth/sso/google/callback` });
  });
});
