// A module's requests as the host makes them (src/extensions/wasm/network.ts), against
// servers of the test's own on loopback: one that echoes what it gets (headers, URL), as a
// hostile module would use to read its credential back, and one the credential is not for.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES, sandboxedGet, secretHider, type BoundCredential, type HttpReply, type NetworkPolicy } from "../../src/extensions/wasm/network";
import { recordingServer } from "./support";

const KEY = "nk-0123456789/abc+def=ghi&jkl";
const HIDDEN = "[REDACTED:credential]";

/** Answers with everything the request carried: method, URL as sent, headers. */
const reflect = (req: Request) => {
  const url = new URL(req.url);
  if (url.pathname === "/to-other") return new Response(null, { status: 302, headers: { location: url.searchParams.get("to")! } });
  // an API that puts the request's key into its redirect (as some echo the query string)
  if (url.pathname === "/leaky-redirect") {
    const key = req.headers.get("x-api-key") ?? url.searchParams.get("appid") ?? "";
    return new Response(null, { status: 302, headers: { location: `${url.searchParams.get("to")}?k=${encodeURIComponent(key)}` } });
  }
  // the key placed `n` bytes into the body, to land it across the cut
  if (url.pathname === "/pad") return new Response("x".repeat(Number(url.searchParams.get("n"))) + (req.headers.get("x-api-key") ?? "") + "y".repeat(64));
  return Response.json({ url: req.url, headers: Object.fromEntries(req.headers) });
};

let api: ReturnType<typeof recordingServer>;
let other: ReturnType<typeof recordingServer>;
let apiHost: string;
let otherHost: string;

beforeAll(() => {
  api = recordingServer(reflect);
  other = recordingServer(reflect);
  apiHost = `127.0.0.1:${api.server.port}`;
  otherHost = `127.0.0.1:${other.server.port}`;
});
afterAll(() => {
  api.stop();
  other.stop();
});

const LOOPBACK = { allowPrivate: false, allowHosts: ["127.0.0.1"] };
const header = (hosts: string[]): BoundCredential => ({ hosts, header: { name: "X-Api-Key", value: KEY }, secret: KEY });
const query = (hosts: string[]): BoundCredential => ({ hosts, query: { name: "appid", value: KEY }, secret: KEY });
const policy = (credential?: BoundCredential, extra: Partial<NetworkPolicy> = {}): NetworkPolicy => ({
  allow: [apiHost, otherHost],
  access: LOOPBACK,
  credential,
  ...extra,
});
const get = (url: string, p: NetworkPolicy) => sandboxedGet(url, p, new AbortController().signal);
const bodyOf = (reply: HttpReply) => {
  if ("error" in reply) throw new Error(`expected a body, got ${reply.error}`);
  return reply.body;
};

describe("a credential bound to its hosts", () => {
  test("in a header: sent to its host, whose echo of it the module gets hidden", async () => {
    const before = api.seen.length;
    const body = bodyOf(await get(`${api.origin}/echo`, policy(header([apiHost]))));
    expect(api.seen.length).toBe(before + 1);
    expect(api.seen.at(-1)!.headers["x-api-key"]).toBe(KEY);
    expect(body).not.toContain(KEY);
    expect(JSON.parse(body).headers["x-api-key"]).toBe(HIDDEN);
  });

  test("in the query: sent to its host; the echoed URL (percent-encoded) is hidden too", async () => {
    const body = bodyOf(await get(`${api.origin}/echo?q=1`, policy(query([apiHost]))));
    expect(new URL(api.seen.at(-1)!.url).searchParams.get("appid")).toBe(KEY);
    expect(body).not.toContain(KEY);
    expect(body).not.toContain(encodeURIComponent(KEY));
    expect(body).not.toContain(new URLSearchParams({ a: KEY }).toString().slice(2));
    expect(JSON.parse(body).url).toContain(`appid=${HIDDEN}`);
  });

  test("a host on the allow list but not bound never receives it", async () => {
    for (const credential of [header([apiHost]), query([apiHost])]) {
      const before = other.seen.length;
      bodyOf(await get(`${other.origin}/echo`, policy(credential)));
      expect(other.seen.length).toBe(before + 1);
      expect(JSON.stringify(other.seen.at(-1))).not.toContain(KEY);
      expect(other.seen.at(-1)!.headers["x-api-key"]).toBeUndefined();
    }
  });

  test("without a binding it goes nowhere, not even to the host it is meant for", async () => {
    await get(`${api.origin}/echo`, policy(header([])));
    expect(JSON.stringify(api.seen.at(-1))).not.toContain(KEY);
  });

  test("a redirect from its host to another host goes on without it", async () => {
    const before = other.seen.length;
    const body = bodyOf(await get(`${api.origin}/to-other?to=${encodeURIComponent(`${other.origin}/echo`)}`, policy(header([apiHost]))));
    expect(api.seen.at(-1)!.headers["x-api-key"]).toBe(KEY);
    expect(other.seen.length).toBe(before + 1);
    expect(other.seen.at(-1)!.headers["x-api-key"]).toBeUndefined();
    expect(body).not.toContain(KEY);
  });

  test("a redirect that carries it in its URL is not followed", async () => {
    for (const credential of [header([apiHost]), query([apiHost])]) {
      const before = other.seen.length;
      const reply = await get(`${api.origin}/leaky-redirect?to=${encodeURIComponent(`${other.origin}/echo`)}`, policy(credential));
      expect(reply).toEqual({ error: `${apiHost} redirected with the extension's credential in the URL; the redirect was not followed` });
      expect(other.seen.length).toBe(before);
    }
  });

  test("a cut body never ends in the start of it, wherever the cut falls", async () => {
    for (const n of [MAX_BODY_BYTES - KEY.length - 1, MAX_BODY_BYTES - 20, MAX_BODY_BYTES - 5, MAX_BODY_BYTES - 1, MAX_BODY_BYTES]) {
      const reply = await get(`${api.origin}/pad?n=${n}`, policy(header([apiHost])));
      const body = bodyOf(reply);
      expect(reply).toMatchObject({ truncated: true });
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
      expect(body).not.toContain(KEY.slice(0, 6));
    }
  });

  test("the hider knows the forms a server echoes it in", () => {
    const { hide, span } = secretHider(KEY);
    const forms = [KEY, encodeURIComponent(KEY), new URLSearchParams({ a: KEY }).toString().slice(2), JSON.stringify(KEY).slice(1, -1)];
    for (const form of forms) expect(hide(`before ${form} after`)).toBe(`before ${HIDDEN} after`);
    expect(span).toBe(Math.max(...forms.map((f) => f.length)));
    expect(secretHider(undefined).hide(KEY)).toBe(KEY);
  });
});

describe("the private-address guard of web_fetch", () => {
  test("the allow list is asked before the host is resolved", async () => {
    const reply = await get("http://nowhere.invalid/", policy());
    expect(reply).toEqual({ error: "http://nowhere.invalid is not on this extension's network allowlist" });
  });

  test("a loopback host on the allow list is refused unless the operator allows it", async () => {
    const before = api.seen.length;
    const strict = await get(`${api.origin}/echo`, policy(undefined, { access: { allowPrivate: false, allowHosts: [] } }));
    expect("error" in strict && strict.error).toContain("refusing to fetch 127.0.0.1: loopback addresses are blocked");
    expect(api.seen.length).toBe(before);
    // a name that resolves to loopback is refused too, and a private address
    const named = await get(`http://localhost:${api.server.port}/echo`, policy(undefined, { allow: [`localhost:${api.server.port}`] }));
    expect("error" in named && named.error).toContain("refusing to fetch localhost");
    const lan = await get("http://10.0.0.1/", policy(undefined, { allow: ["10.0.0.1"] }));
    expect("error" in lan && lan.error).toContain("private addresses are blocked");
    expect(api.seen.length).toBe(before);
    // allowPrivate lifts it, as for web_fetch
    bodyOf(await get(`${api.origin}/echo`, policy(undefined, { access: { allowPrivate: true, allowHosts: [] } })));
    expect(api.seen.length).toBe(before + 1);
  });

  test("an allowed name is reached at the address it was checked at, with its own Host header", async () => {
    const allow = [`localhost:${api.server.port}`];
    const body = bodyOf(await get(`http://localhost:${api.server.port}/echo`, policy(undefined, { allow, access: { allowPrivate: false, allowHosts: ["localhost"] } })));
    expect(JSON.parse(body).headers.host).toBe(`localhost:${api.server.port}`);
  });

  test("a redirect from an allowed host to a loopback one is refused", async () => {
    const allow = [`localhost:${api.server.port}`, otherHost];
    const reply = await get(
      `http://localhost:${api.server.port}/to-other?to=${encodeURIComponent(`${other.origin}/echo`)}`,
      policy(undefined, { allow, access: { allowPrivate: false, allowHosts: ["localhost"] } }),
    );
    expect("error" in reply && reply.error).toContain("refusing to fetch 127.0.0.1");
  });
});
