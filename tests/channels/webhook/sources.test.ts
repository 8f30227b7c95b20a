// Named sources: POST /webhook/{name} with the source's own secret and verification (secret
// header, GitHub, Gitea, Standard Webhooks), JSON or form bodies, and Liquid templates that
// give the job's message, sender and conversation. Their jobs carry `trusted` and `memory`,
// and a conversation is looked up per source and sender, never across them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicePaths } from "../../../src/config/load";
import { ConfigError } from "../../../src/errors";
import { createLogger } from "../../../src/log";
import { startService } from "../../../src/server";
import { getJob } from "../../../src/store/jobs";
import { startTestService, type TestService } from "../../support/harness";
import { finished, hook, jobCount, lastUser, standardHeaders, webhookEnv } from "./support";

const GITHUB = "github-source-secret-0123456789";
const GITEA = "gitea-source-secret-0123456789";
const HA = "homeassistant-secret-0123456789";
const KUMA = "uptimekuma-secret-0123456789";
const STD = "standard-source-secret-0123456789";

const sources = {
  github: {
    secret: GITHUB,
    verify: "github",
    template: {
      message: "GitHub {{ event }} on {{ body.repository.full_name }} by {{ body.sender.login }}: {{ body.head_commit.message | default: body.action }}",
      user_id: "{{ body.sender.login }}",
      conversation_id: "{{ body.repository.full_name }}",
    },
  },
  gitea: { secret: GITEA, verify: "gitea", template: { message: "Gitea {{ event }}: {{ body.commits[0].message }}", conversation_id: "{{ body.repository.full_name }}" } },
  homeassistant: { secret: HA, verify: "secret", trusted: true, memory: "read", template: { message: "{{ body.message }}", conversation_id: "{{ body.area }}" } },
  kuma: { secret: KUMA, verify: "secret", template: { message: "Uptime Kuma: {{ body.msg }}", conversation_id: "{{ body.monitor.name }}" } },
  standard: { secret: STD, verify: "standard" },
};

const hmacHex = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");

const push = {
  ref: "refs/heads/main",
  repository: { full_name: "me/homelab" },
  sender: { login: "octocat" },
  head_commit: { message: "Fix the heater schedule" },
};

let t: TestService;
let home: string;

beforeAll(async () => {
  home = join(mkdtempSync(join(tmpdir(), "service-sources-")), "home");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ http: { sources } }));
  t = await startTestService({ env: webhookEnv(), keepHome: home });
});
afterAll(async () => {
  await t.stop();
  rmSync(join(home, ".."), { recursive: true, force: true });
});

describe("named sources", () => {
  test("GitHub: a push signed with X-Hub-Signature-256 becomes a job from its template; no user_id needed", async () => {
    const raw = JSON.stringify(push);
    const r = await hook(t, "/webhook/github", {
      raw,
      secret: null,
      headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "d-1", "x-hub-signature-256": `sha256=${hmacHex(GITHUB, raw)}` },
    });
    expect(r.status).toBe(202);
    const job = await finished(t, r.body.job_id);
    expect(job).toMatchObject({
      source: "webhook:github",
      sender: "octocat",
      conversationId: "me/homelab",
      message: "GitHub push on me/homelab by octocat: Fix the heater schedule",
      trusted: false,
      memory: "none",
      status: "completed",
    });
    expect(r.body.conversation_id).toBe("me/homelab");
    // the same delivery again (GitHub's Redeliver): the same job
    const again = await hook(t, "/webhook/github", {
      raw,
      secret: null,
      headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "d-1", "x-hub-signature-256": `sha256=${hmacHex(GITHUB, raw)}` },
    });
    expect(again.status).toBe(200);
    expect(again.body.job_id).toBe(r.body.job_id);
  });

  test("GitHub's form-encoded delivery (payload=<json>) is read the same way", async () => {
    const raw = new URLSearchParams({ payload: JSON.stringify({ ...push, head_commit: { message: "Form mode" } }) }).toString();
    const r = await hook(t, "/webhook/github", {
      raw,
      secret: null,
      headers: { "content-type": "application/x-www-form-urlencoded", "x-github-event": "push", "x-hub-signature-256": `sha256=${hmacHex(GITHUB, raw)}` },
    });
    expect(r.status).toBe(202);
    expect((await getJob(t.service.services.db, r.body.job_id))!.message).toBe("GitHub push on me/homelab by octocat: Form mode");
  });

  test("Gitea: X-Gitea-Signature (hex HMAC, no prefix); the sender is the source's name by default", async () => {
    const raw = JSON.stringify({ repository: { full_name: "me/dotfiles" }, commits: [{ message: "Add vimrc" }] });
    const r = await hook(t, "/webhook/gitea", {
      raw,
      secret: null,
      headers: { "content-type": "application/json", "x-gitea-event": "push", "x-gitea-signature": hmacHex(GITEA, raw) },
    });
    expect(r.status).toBe(202);
    expect(await getJob(t.service.services.db, r.body.job_id)).toMatchObject({ sender: "gitea", conversationId: "me/dotfiles", message: "Gitea push: Add vimrc" });
  });

  test("Home Assistant: the source's secret header; trusted and memory: read are carried on the job", async () => {
    const r = await hook(t, "/webhook/homeassistant", { body: { message: "The front door opened", area: "hall" }, secret: HA });
    expect(r.status).toBe(202);
    const job = await finished(t, r.body.job_id);
    expect(job).toMatchObject({ source: "webhook:homeassistant", sender: "homeassistant", conversationId: "hall", trusted: true, memory: "read" });
    // the model reads where it came from before the message
    const sent = t.llm.chatRequests().find((x) => lastUser(x.body).endsWith("The front door opened"))!;
    expect(lastUser(sent.body)).toStartWith("<user-context>\nsource: webhook:homeassistant\nsender: homeassistant\nconversation_id: hall\n</user-context>");
  });

  test("Uptime Kuma: its JSON body and its multipart form body alike", async () => {
    const kuma = { heartbeat: { status: 0 }, monitor: { name: "NAS" }, msg: "[NAS] [🔴 Down] timeout" };
    const json = await hook(t, "/webhook/kuma", { body: kuma, secret: KUMA });
    expect(json.status).toBe(202);
    expect((await getJob(t.service.services.db, json.body.job_id))!.message).toBe("Uptime Kuma: [NAS] [🔴 Down] timeout");
    const form = new FormData();
    form.set("payload", JSON.stringify({ ...kuma, msg: "[NAS] [✅ Up]" }));
    const encoded = new Response(form);
    const type = encoded.headers.get("content-type")!;
    const raw = new Uint8Array(await encoded.arrayBuffer());
    const multipart = await hook(t, "/webhook/kuma", { raw, secret: KUMA, headers: { "content-type": type } });
    expect(multipart.status).toBe(202);
    expect((await getJob(t.service.services.db, multipart.body.job_id))!.message).toBe("Uptime Kuma: [NAS] [✅ Up]");
  });

  test("a source with no template: the event and the payload as JSON, the source as sender, Standard Webhooks verified", async () => {
    const raw = JSON.stringify({ alert: "disk 91%" });
    const r = await hook(t, "/webhook/standard", { raw, secret: null, headers: { "content-type": "application/json", ...standardHeaders(raw, { secret: STD }) } });
    expect(r.status).toBe(202);
    const job = (await getJob(t.service.services.db, r.body.job_id))!;
    expect(job.sender).toBe("standard");
    expect(job.message).toBe('Webhook from standard:\n{\n  "alert": "disk 91%"\n}');
    // a stale signature is refused like on /webhook
    const stale = await hook(t, "/webhook/standard", {
      raw,
      secret: null,
      headers: { "content-type": "application/json", ...standardHeaders(raw, { secret: STD, at: new Date(Date.now() - 10 * 60_000) }) },
    });
    expect(stale.status).toBe(401);
  });

  test("refused: a wrong or missing signature, the channel's own secret, another source's secret, an unknown source; nothing queued", async () => {
    const before = await jobCount(t);
    const raw = JSON.stringify(push);
    const cases = [
      hook(t, "/webhook/github", { raw, secret: null, headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${hmacHex("wrong-secret-0123456789", raw)}` } }),
      hook(t, "/webhook/github", { raw, headers: { "content-type": "application/json" } }),
      hook(t, "/webhook/kuma", { body: { msg: "x" }, secret: HA }),
      hook(t, "/webhook/gitea", { raw, secret: null, headers: { "content-type": "application/json", "x-gitea-signature": "00" } }),
    ];
    for (const r of await Promise.all(cases)) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: expect.any(String) });
    }
    const unknown = await hook(t, "/webhook/nosuch", { body: { message: "x" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain("nosuch");
    expect(await jobCount(t)).toBe(before);
  });

  test("a body the template cannot use or the source cannot read is a 400; nothing queued", async () => {
    const before = await jobCount(t);
    // the template renders to an empty message
    const empty = await hook(t, "/webhook/homeassistant", { body: { other: "field" }, secret: HA });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain("empty message");
    const text = await hook(t, "/webhook/homeassistant", { raw: "hello", secret: HA, headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(400);
    expect(text.body.error).toContain("Content-Type");
    const bad = await hook(t, "/webhook/homeassistant", { raw: "{nope", secret: HA, headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(await jobCount(t)).toBe(before);
  });

  test("senders never share a conversation: the same conversation_id from another source or sender is another thread", async () => {
    const ha = await finished(t, (await hook(t, "/webhook/homeassistant", { body: { message: "kitchen light on", area: "shared" }, secret: HA })).body.job_id);
    const kuma = await finished(t, (await hook(t, "/webhook/kuma", { body: { msg: "kitchen down", monitor: { name: "shared" } }, secret: KUMA })).body.job_id);
    const direct = await finished(t, (await hook(t, "/webhook", { body: { user_id: "homeassistant", message: "direct", conversation_id: "shared" } })).body.job_id);
    const again = await finished(t, (await hook(t, "/webhook/homeassistant", { body: { message: "kitchen light off", area: "shared" }, secret: HA })).body.job_id);
    expect(new Set([ha.threadId, kuma.threadId, direct.threadId]).size).toBe(3);
    expect(again.threadId).toBe(ha.threadId);
  });
});

describe("configuration", () => {
  const start = (http: object) => {
    const dir = mkdtempSync(join(tmpdir(), "service-sources-config-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ http }));
    const env = { SERVICE_HOME: dir, GATEWAY_PORT: "0", ...webhookEnv() };
    return startService({ paths: servicePaths(env), env, log: createLogger({ format: "json", write: () => {} }) }).finally(() => rmSync(dir, { recursive: true, force: true }));
  };

  test("a template that does not parse stops the start, naming its key", async () => {
    const e = await start({ sources: { bad: { secret: HA, verify: "secret", template: { message: "{{ body.x | nosuchfilter }}" } } } }).catch((x) => x);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain("http.sources.bad.template.message");
  });

  test("a short secret or an unknown verification is refused by the schema", async () => {
    for (const source of [{ secret: "short", verify: "secret" }, { secret: HA, verify: "bitbucket" }, { secret: HA, verify: "secret", memory: "write" }]) {
      const e = await start({ sources: { s: source } }).catch((x) => x);
      expect(e).toBeInstanceOf(ConfigError);
      expect(e.message).toContain("/http/sources/s");
    }
  });
});
