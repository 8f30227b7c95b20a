// web_fetch and web_search through the agent loop, against HTTP servers of the test's own on
// 127.0.0.1 (nothing here reaches the internet): the private-address rule, redirects, HTML as
// text, the size limit and the timeout; web_search against a fake SearXNG.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkHost, restrictedKind, type WebAccess } from "../../src/tools/builtin/web-guard";
import { webFetchTool } from "../../src/tools/builtin/web-fetch";
import { startTestService, type TestService } from "../support/harness";

/** Has the model call one tool; returns the tool result text it was given. */
async function call(t: TestService, name: string, args: unknown): Promise<string> {
  t.llm.enqueue({ toolCalls: [{ name, arguments: args }] }, { text: "done" });
  const r = await t.respond({ model: "m", input: `please run ${name}` });
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("completed");
  const toolMessages = t.llm.lastChat().messages.filter((m: any) => m.role === "tool");
  expect(toolMessages).toHaveLength(1);
  return toolMessages[0].content as string;
}

const PAGE = `<!doctype html>
<html><head><title>The &amp; Page</title><style>body { color: red }</style>
<script>var secret = "from-head-script";</script></head>
<body>
<nav><a href="/home">Navigation link</a></nav>
<h1>Main heading</h1>
<p>First paragraph with caf&eacute; &amp; &#x263A; and <a href="/rel/path?x=1">a relative link</a>.</p>
<script>document.write("from-body-script")</script>
<style>.hidden { display: none }</style>
<h2>Second heading</h2>
<ul><li>apple</li><li>pear</li></ul>
<p>Absolute: <a href="https://example.org/doc">example</a></p>
</body></html>`;

/** Each way of hiding text from a reader, with an instruction for the model inside. */
const HIDDEN: [string, string][] = [
  ["the hidden attribute", "<div hidden>HIDDEN-1</div>"],
  ["hidden=until-found", '<div hidden="until-found">HIDDEN-2</div>'],
  ["aria-hidden", '<span aria-hidden="true">HIDDEN-3</span>'],
  ["display:none", '<p style="display:none">HIDDEN-4</p>'],
  ["DISPLAY : NONE !important after a broken declaration", '<p style="junk; DISPLAY : NONE !important">HIDDEN-5</p>'],
  ["visibility:hidden", '<p style="visibility:hidden">HIDDEN-6</p>'],
  ["visibility:collapse", '<p style="visibility: collapse">HIDDEN-7</p>'],
  ["font-size:0", '<p style="font-size:0">HIDDEN-8</p>'],
  ["font-size:1px", '<p style="font-size: 1px">HIDDEN-9</p>'],
  ["a relative size inside font-size:0", '<div style="font-size:0"><span style="font-size:80%">HIDDEN-10</span></div>'],
  ["zero width with overflow hidden", '<div style="width:0;overflow:hidden">HIDDEN-11</div>'],
  ["zero height with overflow hidden", '<div style="height:0px; overflow:hidden">HIDDEN-12</div>'],
  ["1px clip (screen-reader-only styles)", '<div style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)">HIDDEN-13</div>'],
  ["opacity:0", '<p style="opacity:0">HIDDEN-14</p>'],
  ["opacity:0%", '<p style="opacity: 0%">HIDDEN-15</p>'],
  ["white text on the default white page", '<p style="color:#fff">HIDDEN-16</p>'],
  ["text in the background's colour", '<div style="background:#123456 url(x.png)"><p style="color: rgb(18, 52, 86)">HIDDEN-17</p></div>'],
  ["a near-white named colour", '<p style="color:snow">HIDDEN-18</p>'],
  ["transparent text", '<p style="color:transparent">HIDDEN-19</p>'],
  ["rgba text with alpha 0", '<p style="color:rgba(0,0,0,0)">HIDDEN-20</p>'],
  ["a font colour attribute on a bgcolor table", '<table bgcolor="black"><tr><td><font color="#000">HIDDEN-21</font></td></tr></table>'],
  ["a template", "<template><p>HIDDEN-22</p></template>"],
  ["noscript", "<noscript>HIDDEN-23</noscript>"],
  ["an HTML comment", "<!-- HIDDEN-24 -->"],
  ["a script", "<script>/* HIDDEN-25 */</script>"],
  ["a style", "<style>/* HIDDEN-26 */</style>"],
  ["a closed dialog", "<dialog><p>HIDDEN-27</p></dialog>"],
  ["text-indent off the page", '<h3 style="text-indent:-9999px">HIDDEN-28</h3>'],
  ["an absolute position off the page", '<div style="position:absolute; left:-10000px">HIDDEN-29</div>'],
  ["scale(0)", '<div style="transform: scale(0)">HIDDEN-30</div>'],
  ["clip-path inset(50%)", '<div style="clip-path: inset(50%)">HIDDEN-31</div>'],
  ["content-visibility:hidden", '<div style="content-visibility:hidden">HIDDEN-32</div>'],
  ["a hidden element deep inside visible ones", '<div><section><article><span style="display:none">HIDDEN-33</span></article></section></div>'],
];
/** Text a reader does see, next to the hidden text, which must stay. */
const SHOWN: [string, string][] = [
  ["an ordinary paragraph", "<p>VISIBLE-1</p>"],
  ["a visible child of visibility:hidden", '<div style="visibility:hidden"><p style="visibility:visible">VISIBLE-2</p></div>'],
  ["a sized child of font-size:0 (an inline-block layout trick)", '<div style="font-size:0"><span style="font-size:16px">VISIBLE-3</span></div>'],
  ["white text on a dark background", '<div style="background-color:#222"><p style="color:white">VISIBLE-4</p></div>'],
  ["aria-hidden=false", '<p aria-hidden="false">VISIBLE-5</p>'],
  ["an open dialog", "<dialog open>VISIBLE-6</dialog>"],
  ["a closed details element (a reader can open it)", "<details><summary>VISIBLE-7</summary>VISIBLE-8</details>"],
  ["grey text", '<p style="color:#777">VISIBLE-9</p>'],
  ["a semicolon inside a url() before display:block", `<p style="background:url('a;b.png'); display:block">VISIBLE-10</p>`],
];
const HIDING_PAGE = `<!doctype html><html><head><title>Hidden text</title></head><body>
${[...HIDDEN, ...SHOWN].map(([, html]) => html).join("\n")}
</body></html>`;

/** A site on loopback that counts the requests it sees, per path. */
function startSite() {
  const seen: string[] = [];
  let port = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      seen.push(url.pathname);
      const p = url.pathname;
      if (p === "/page") return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
      if (p === "/hiding") return new Response(HIDING_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
      if (p === "/json") return Response.json({ name: "widget", tags: ["a", "b"] });
      if (p === "/text") return new Response("plain text as is <b>not html</b>", { headers: { "content-type": "text/plain" } });
      if (p === "/host") return new Response(`host=${req.headers.get("host")}`, { headers: { "content-type": "text/plain" } });
      if (p === "/image") return new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), { headers: { "content-type": "image/png" } });
      if (p === "/missing") return new Response("<p>no such page</p>", { status: 404, headers: { "content-type": "text/html" } });
      if (p === "/big") return new Response("0123456789abcdef".repeat(3 * 65536), { headers: { "content-type": "text/plain" } }); // 3 MiB
      const hop = /^\/hop\/(\d+)$/.exec(p);
      if (hop) {
        const n = Number(hop[1]);
        return new Response(null, { status: n % 2 ? 301 : 307, headers: { location: n > 1 ? `/hop/${n - 1}` : "/page" } });
      }
      if (p === "/to-loopback") return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${port}/page` } });
      if (p === "/to-metadata") return new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
      if (p === "/to-file") return new Response(null, { status: 302, headers: { location: "file:///etc/passwd" } });
      return new Response("not found", { status: 404 });
    },
  });
  port = server.port!;
  return { server, seen, base: `http://127.0.0.1:${port}`, port };
}

describe("restrictedKind", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared (CGNAT)"],
    ["100.127.255.254", "shared (CGNAT)"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fc00::1", "private (unique local)"],
    ["fd12:3456::1", "private (unique local)"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped link-local"],
    ["::ffff:192.168.0.1", "IPv4-mapped private"],
    ["64:ff9b::10.0.0.1", "NAT64 private"],
    ["2002:7f00:1::", "6to4 loopback"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["not-an-ip", "unparsable"],
  ])("%s is %s", (address, kind) => {
    expect(restrictedKind(address)).toBe(kind);
  });

  test.each([["8.8.8.8"], ["1.1.1.1"], ["172.32.0.1"], ["100.128.0.1"], ["2606:4700::1111"], ["::ffff:8.8.8.8"], ["2002:808:808::"]])(
    "%s is public",
    (address) => {
      expect(restrictedKind(address)).toBeNull();
    },
  );
});

/** A resolver that records every name it is asked and answers from `answers` (then the last answer again). */
function countingResolver(answers: Record<string, string[][]> = {}) {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const list = answers[hostname] ?? [["93.184.215.14"]];
    return list[Math.min(asked.filter((h) => h === hostname).length, list.length) - 1]!;
  };
  return { asked, resolve };
}

describe("the host is checked against policy before it is resolved", () => {
  const closed: WebAccess = { allowPrivate: false, allowHosts: [] };
  const open: WebAccess = { allowPrivate: true, allowHosts: [] };

  test.each([
    ["localhost", "loopback"],
    ["app.localhost", "loopback"],
    ["127.0.0.1", "loopback"],
    ["[::1]", "loopback"],
    ["10.0.0.1", "private"],
    ["[fd00:ec2::254]", "private (unique local)"],
    ["169.254.169.254", "link-local"],
    ["nas", "a name without a dot"],
    ["metadata", "cloud metadata"],
    ["metadata.google.internal", "cloud metadata"],
    ["db.internal", ".internal names"],
    ["printer.local", ".local names"],
    ["router.home.arpa", ".home.arpa names"],
  ])("%s is refused without a DNS lookup", async (host, why) => {
    const dns = countingResolver();
    await expect(checkHost(host, closed, dns.resolve)).rejects.toThrow(why);
    expect(dns.asked).toEqual([]);
  });

  test.each([["169.254.169.254"], ["[fd00:ec2::254]"], ["100.100.100.200"], ["metadata.google.internal"], ["metadata"]])(
    "with WEB_FETCH_ALLOW_PRIVATE, the cloud metadata service %s is still refused without a lookup",
    async (host) => {
      const dns = countingResolver();
      await expect(checkHost(host, open, dns.resolve)).rejects.toThrow("it is a cloud metadata service; only naming it in tools.web.allowHosts");
      expect(dns.asked).toEqual([]);
    },
  );

  test("allowHosts may name a metadata service; allowPrivate lets local names through to one lookup", async () => {
    const dns = countingResolver({ "metadata.google.internal": [["169.254.169.254"]], nas: [["192.168.1.5"]] });
    expect(await checkHost("metadata.google.internal", { allowPrivate: false, allowHosts: ["metadata.google.internal"] }, dns.resolve)).toEqual({
      hostname: "metadata.google.internal",
      addresses: ["169.254.169.254"],
    });
    expect(await checkHost("nas", open, dns.resolve)).toEqual({ hostname: "nas", addresses: ["192.168.1.5"] });
    expect(dns.asked).toEqual(["metadata.google.internal", "nas"]);
  });

  test("a public name is resolved once; one that resolves to a private or metadata address is refused", async () => {
    const dns = countingResolver({ "rebind.example": [["127.0.0.1"]], "meta.example": [["169.254.169.254"]] });
    expect(await checkHost("www.example.org", closed, dns.resolve)).toEqual({ hostname: "www.example.org", addresses: ["93.184.215.14"] });
    await expect(checkHost("rebind.example", closed, dns.resolve)).rejects.toThrow("it resolves to 127.0.0.1: loopback addresses are blocked");
    await expect(checkHost("meta.example", open, dns.resolve)).rejects.toThrow("it resolves to 169.254.169.254: it is a cloud metadata service");
    expect(dns.asked).toEqual(["www.example.org", "rebind.example", "meta.example"]);
  });

  test("through web_fetch: a refused host is never looked up, and an allowed name is resolved once and fetched at that address", async () => {
    const site = startSite();
    try {
      // a second answer would lead nowhere (nothing listens on 127.0.0.2): only the first may be used
      const dns = countingResolver({ "site.test": [["127.0.0.1"], ["127.0.0.2"]] });
      const tool = webFetchTool({ allowPrivate: false, allowHosts: ["site.test"] }, { resolve: dns.resolve });
      const ctx = { userId: "u", threadId: "t", signal: new AbortController().signal };
      for (const url of ["http://metadata.google.internal/computeMetadata/v1/", "http://nas/", `http://localhost:${site.port}/page`, "http://169.254.169.254/"]) {
        await expect(tool.execute({ url }, ctx)).rejects.toThrow("refusing to fetch");
      }
      expect(dns.asked).toEqual([]);
      expect(site.seen).toEqual([]);
      expect(await tool.execute({ url: `http://site.test:${site.port}/host` }, ctx)).toContain(`host=site.test:${site.port}`);
      expect(dns.asked).toEqual(["site.test"]);
    } finally {
      await site.server.stop(true);
    }
  });
});

describe("web_fetch with private addresses refused (the default)", () => {
  let t: TestService;
  let site: ReturnType<typeof startSite>;
  beforeAll(async () => {
    site = startSite();
    t = await startTestService();
  });
  afterAll(async () => {
    await t.stop();
    await site.server.stop(true);
  });

  test("web_fetch is registered and web_search is absent without WEB_SEARCH_URL", async () => {
    expect(t.service.services.tools.get("web_fetch")).toBeDefined();
    expect(t.service.services.tools.get("web_search")).toBeUndefined();
  });

  test.each([
    ["the loopback test server", (s: ReturnType<typeof startSite>) => `${s.base}/page`, "loopback"],
    ["localhost", (s: ReturnType<typeof startSite>) => `http://localhost:${s.port}/page`, "loopback"],
    ["LOCALHOST. with a trailing dot", (s: ReturnType<typeof startSite>) => `http://LOCALHOST.:${s.port}/page`, "loopback"],
    ["a name under .localhost", (s: ReturnType<typeof startSite>) => `http://app.localhost:${s.port}/page`, "loopback"],
    ["127.1", (s: ReturnType<typeof startSite>) => `http://127.1:${s.port}/page`, "loopback"],
    ["a decimal IPv4 literal", (s: ReturnType<typeof startSite>) => `http://2130706433:${s.port}/page`, "loopback"],
    ["[::1]", (s: ReturnType<typeof startSite>) => `http://[::1]:${s.port}/page`, "loopback"],
    ["IPv4-mapped IPv6 loopback", (s: ReturnType<typeof startSite>) => `http://[::ffff:127.0.0.1]:${s.port}/page`, "IPv4-mapped loopback"],
    ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/", "link-local"],
    ["0.0.0.0", (s: ReturnType<typeof startSite>) => `http://0.0.0.0:${s.port}/page`, "unspecified"],
    ["a private 10/8 address", () => "http://10.0.0.1/", "private"],
  ])("%s is refused", async (_label, url, kind) => {
    const before = site.seen.length;
    const out = await call(t, "web_fetch", { url: url(site) });
    expect(out).toContain("Error: web_fetch failed: refusing to fetch");
    expect(out).toContain(kind);
    expect(out).toContain("allowHosts");
    expect(site.seen.length).toBe(before);
  });
});

describe("web_fetch with allowHosts", () => {
  let t: TestService;
  let site: ReturnType<typeof startSite>;
  let dir: string;
  beforeAll(async () => {
    site = startSite();
    dir = mkdtempSync(join(tmpdir(), "service-web-test-"));
    const home = join(dir, "home");
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, "config.json"), JSON.stringify({ tools: { web: { allowHosts: ["localhost"] } } }));
    t = await startTestService({ keepHome: home });
  });
  afterAll(async () => {
    await t.stop();
    await site.server.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  test("an allowed host is fetched; the request keeps its Host header", async () => {
    const out = await call(t, "web_fetch", { url: `http://localhost:${site.port}/host` });
    expect(out).toContain(`host=localhost:${site.port}`);
  });

  test("a redirect from an allowed host to a private address is refused", async () => {
    const before = site.seen.length;
    const out = await call(t, "web_fetch", { url: `http://localhost:${site.port}/to-loopback` });
    expect(out).toContain("refusing to fetch 127.0.0.1");
    expect(site.seen.slice(before)).toEqual(["/to-loopback"]);
    expect(await call(t, "web_fetch", { url: `http://localhost:${site.port}/to-metadata` })).toContain("refusing to fetch 169.254.169.254");
  });

  test("other private hosts are still refused", async () => {
    expect(await call(t, "web_fetch", { url: `${site.base}/page` })).toContain("refusing to fetch 127.0.0.1");
  });
});

describe("web_fetch with WEB_FETCH_ALLOW_PRIVATE=true", () => {
  let t: TestService;
  let site: ReturnType<typeof startSite>;
  beforeAll(async () => {
    site = startSite();
    t = await startTestService({ env: { WEB_FETCH_ALLOW_PRIVATE: "true" } });
  });
  afterAll(async () => {
    await t.stop();
    await site.server.stop(true);
  });

  test("HTML becomes readable text: script, style, nav and head dropped, entities decoded", async () => {
    const out = await call(t, "web_fetch", { url: `${site.base}/page` });
    expect(out).toContain(`URL: ${site.base}/page`);
    expect(out).toContain("Status: 200");
    expect(out).toContain("Title: The & Page");
    expect(out).toContain("# Main heading");
    expect(out).toContain("## Second heading");
    expect(out).toContain("First paragraph with café & ☺ and a relative link [" + `${site.base}/rel/path?x=1]`);
    expect(out).toContain("example [https://example.org/doc]");
    expect(out).toMatch(/\* apple\n\s*\* pear/);
    for (const gone of ["from-head-script", "from-body-script", "color: red", "display: none", "Navigation link", "<p>", "&amp;"]) {
      expect(out).not.toContain(gone);
    }
  });

  test("text hidden from a reader never reaches the model; what a reader sees does", async () => {
    const out = await call(t, "web_fetch", { url: `${site.base}/hiding` });
    const sent = JSON.stringify(t.llm.lastChat());
    expect(sent.match(/HIDDEN-\d+/g)).toBeNull();
    for (const [, html] of SHOWN) for (const marker of html.match(/VISIBLE-\d+/g)!) expect(out).toContain(marker);
  });

  test("JSON and plain text are returned as is", async () => {
    const json = await call(t, "web_fetch", { url: `${site.base}/json` });
    expect(json).toContain('{"name":"widget","tags":["a","b"]}');
    const text = await call(t, "web_fetch", { url: `${site.base}/text` });
    expect(text).toContain("plain text as is <b>not html</b>");
  });

  test("an error status is reported with the page", async () => {
    const out = await call(t, "web_fetch", { url: `${site.base}/missing` });
    expect(out).toContain("Status: 404");
    expect(out).toContain("no such page");
  });

  test("redirects are followed, up to five", async () => {
    const before = site.seen.length;
    const out = await call(t, "web_fetch", { url: `${site.base}/hop/5` });
    expect(out).toContain(`URL: ${site.base}/page`);
    expect(out).toContain("# Main heading");
    expect(site.seen.slice(before)).toEqual(["/hop/5", "/hop/4", "/hop/3", "/hop/2", "/hop/1", "/page"]);

    const tooMany = await call(t, "web_fetch", { url: `${site.base}/hop/6` });
    expect(tooMany).toContain("too many redirects");
  });

  test("the body is cut at 2 MiB with a note", async () => {
    const out = await call(t, "web_fetch", { url: `${site.base}/big` });
    expect(out).toContain("[truncated: the response is larger than 2 MiB; only the first 2 MiB was read]");
    expect(out).toContain("0123456789abcdef0123456789abcdef");
  });

  test("a server that never answers times out", async () => {
    const sockets = new Set<{ end(): void }>();
    const silent = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: { open: (s) => void sockets.add(s), data() {}, close: (s) => void sockets.delete(s) },
    });
    const tools = t.service.services.tools;
    const original = tools.get("web_fetch")!;
    tools.unregister("web_fetch");
    tools.register(webFetchTool(t.service.config.tools.web, { timeoutMs: 300 }));
    try {
      const started = performance.now();
      const out = await call(t, "web_fetch", { url: `http://127.0.0.1:${silent.port}/` });
      expect(out).toContain("timed out after 0.3 s");
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      tools.unregister("web_fetch");
      tools.register(original);
      for (const s of sockets) s.end();
      silent.stop(true);
    }
  });

  test.each([["file:///etc/passwd"], ["ftp://127.0.0.1/x"], ["data:text/plain,hello"], ["javascript:alert(1)"], ["gopher://127.0.0.1:70/"]])(
    "%s is refused: only http and https",
    async (url) => {
      expect(await call(t, "web_fetch", { url })).toContain("only http and https can be fetched");
    },
  );

  test("a redirect to file: is refused", async () => {
    const out = await call(t, "web_fetch", { url: `${site.base}/to-file` });
    expect(out).toContain("a redirect uses file: only http and https can be fetched");
  });

  test("not a URL, and binary content, are clear errors", async () => {
    expect(await call(t, "web_fetch", { url: "not a url" })).toContain("not a valid absolute URL");
    expect(await call(t, "web_fetch", { url: `${site.base}/image` })).toContain("image/png, not text");
  });

  const openssl = Bun.which("openssl");
  test.skipIf(!openssl)("https goes to the checked address and verifies the certificate for the host name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "service-tls-"));
    try {
      const proc = Bun.spawnSync([openssl!, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=DNS:localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stderr: "pipe" });
      expect(proc.exitCode).toBe(0);
      const cert = await Bun.file(join(dir, "cert.pem")).text();
      const key = await Bun.file(join(dir, "key.pem")).text();
      const tlsSite = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: { cert, key }, fetch: (req) => new Response(`secure host=${req.headers.get("host")}`) });
      const tools = t.service.services.tools;
      const original = tools.get("web_fetch")!;
      tools.unregister("web_fetch");
      tools.register(webFetchTool(t.service.config.tools.web, { ca: cert }));
      try {
        expect(await call(t, "web_fetch", { url: `https://localhost:${tlsSite.port}/` })).toContain(`secure host=localhost:${tlsSite.port}`);
        // the same server by address: the certificate does not name 127.0.0.1
        expect(await call(t, "web_fetch", { url: `https://127.0.0.1:${tlsSite.port}/` })).toContain("Error: web_fetch failed");
      } finally {
        tools.unregister("web_fetch");
        tools.register(original);
        await tlsSite.stop(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("web_search", () => {
  let t: TestService;
  let searx: ReturnType<typeof Bun.serve>;
  const queries: URLSearchParams[] = [];
  beforeAll(async () => {
    searx = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        if (url.pathname !== "/search") return new Response("not found", { status: 404 });
        queries.push(url.searchParams);
        if (url.searchParams.get("q") === "forbidden") return new Response("json disabled", { status: 403 });
        const results = Array.from({ length: 8 }, (_, i) => ({
          title: `Result ${i + 1} for ${url.searchParams.get("q")}`,
          url: `https://example.org/${i + 1}`,
          content: `Snippet\nnumber ${i + 1}`,
          engine: "fake",
        }));
        return Response.json({ query: url.searchParams.get("q"), number_of_results: 8, results });
      },
    });
    t = await startTestService({ env: { WEB_SEARCH_URL: `http://127.0.0.1:${searx.port}/` } });
  });
  afterAll(async () => {
    await t.stop();
    await searx.stop(true);
  });

  test("is registered and offered to the model", async () => {
    expect(t.service.services.tools.get("web_search")).toBeDefined();
    await call(t, "web_search", { query: "x" });
    const offered = t.llm.lastChat().tools.map((s: any) => s.function.name);
    expect(offered).toContain("web_search");
    expect(offered).toContain("web_fetch");
  });

  test("returns title, URL and snippet lines, five by default", async () => {
    const out = await call(t, "web_search", { query: "bun & elysia" });
    expect(queries.at(-1)!.get("q")).toBe("bun & elysia");
    expect(queries.at(-1)!.get("format")).toBe("json");
    expect(out).toContain('Results for "bun & elysia"');
    expect(out).toContain("1. Result 1 for bun & elysia\n   https://example.org/1\n   Snippet number 1");
    expect(out).toContain("5. Result 5");
    expect(out).not.toContain("6. Result 6");
  });

  test("limit picks how many", async () => {
    const out = await call(t, "web_search", { query: "two", limit: 2 });
    expect(out).toContain("2. Result 2");
    expect(out).not.toContain("3. Result 3");
    expect(await call(t, "web_search", { query: "two", limit: 50 })).toContain("invalid arguments for web_search");
  });

  test("a SearXNG without JSON output is explained", async () => {
    expect(await call(t, "web_search", { query: "forbidden" })).toContain("search.formats");
  });
});
