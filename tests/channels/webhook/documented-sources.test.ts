// The named-source examples of docs/webhooks-and-routines.md work as written: its config.json
// block is read from the page itself, and deliveries shaped as GitHub, Gitea, Home Assistant's
// rest_command and Uptime Kuma send them become the jobs the page says.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getJob } from "../../../src/store/jobs";
import { startTestService, type TestService } from "../../support/harness";
import { hook, webhookEnv } from "./support";

const page = readFileSync(resolve(import.meta.dir, "../../../docs/webhooks-and-routines.md"), "utf8");
const block = /<!-- example: webhook sources -->\s*```json\n([\s\S]*?)```/.exec(page)?.[1];
const config = JSON.parse(block ?? "null");
const secret = (name: string) => config.http.sources[name].secret as string;
const hmac = (key: string, body: string) => createHmac("sha256", key).update(body).digest("hex");

let t: TestService;
let home: string;

beforeAll(async () => {
  home = join(mkdtempSync(join(tmpdir(), "service-documented-sources-")), "home");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  t = await startTestService({ env: webhookEnv(), keepHome: home });
});
afterAll(async () => {
  await t.stop();
  rmSync(join(home, ".."), { recursive: true, force: true });
});

/** Posts a delivery that must be accepted; returns the stored job. */
async function deliver(path: string, init: Parameters<typeof hook>[2]) {
  const r = await hook(t, path, { secret: null, ...init });
  expect(r.status).toBe(202);
  return (await getJob(t.service.services.db, r.body.job_id))!;
}

test("docs/webhooks-and-routines.md has the example block", () => {
  expect(Object.keys(config.http.sources)).toEqual(["github", "gitea", "homeassistant", "uptime-kuma"]);
});

test("GitHub: a push and an issue, as JSON and as a form", async () => {
  const push = JSON.stringify({
    ref: "refs/heads/main",
    repository: { full_name: "me/homelab" },
    sender: { login: "octocat" },
    commits: [{ message: "Tune the heater" }, { message: "Fix the heater schedule" }],
    head_commit: { message: "Fix the heater schedule" },
  });
  const job = await deliver("/webhook/github", {
    raw: push,
    headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958", "x-hub-signature-256": `sha256=${hmac(secret("github"), push)}` },
  });
  expect(job).toMatchObject({ sender: "octocat", conversationId: "me/homelab", message: "GitHub push on me/homelab by octocat: 2 commit(s) to refs/heads/main, the last: Fix the heater schedule" });
  const issue = new URLSearchParams({
    payload: JSON.stringify({ action: "opened", issue: { number: 7, title: "Heater stays on" }, repository: { full_name: "me/homelab" }, sender: { login: "hubot" } }),
  }).toString();
  const form = await deliver("/webhook/github", {
    raw: issue,
    headers: { "content-type": "application/x-www-form-urlencoded", "x-github-event": "issues", "x-hub-signature-256": `sha256=${hmac(secret("github"), issue)}` },
  });
  expect(form.message).toBe("GitHub issues on me/homelab by hubot: issue #7 opened: Heater stays on");
});

test("Gitea: a push", async () => {
  const push = JSON.stringify({ repository: { full_name: "me/dotfiles" }, sender: { login: "alice" }, commits: [{ message: "Add vimrc" }, { message: "Fix zshrc" }] });
  const job = await deliver("/webhook/gitea", {
    raw: push,
    headers: { "content-type": "application/json", "x-gitea-event": "push", "x-gitea-delivery": "d2b5", "x-gitea-signature": hmac(secret("gitea"), push) },
  });
  expect(job).toMatchObject({ sender: "alice", conversationId: "me/dotfiles", message: "Gitea push on me/dotfiles by alice: Add vimrc; Fix zshrc" });
});

test("Home Assistant: the rest_command's body, with the secret header; trusted, memory read", async () => {
  // what `payload: '{"message": {{ message | to_json }}, "area": {{ area | to_json }}}'` renders
  const body = JSON.stringify({ message: "The front door opened at 23:41. Is anyone expected tonight?", area: "front door" });
  const job = await deliver("/webhook/homeassistant", { raw: body, headers: { "content-type": "application/json", "x-webhook-secret": secret("homeassistant") } });
  expect(job).toMatchObject({ sender: "homeassistant", conversationId: "front door", message: "The front door opened at 23:41. Is anyone expected tonight?", trusted: true, memory: "read" });
});

test("Uptime Kuma: a monitor going down, and its Test button", async () => {
  const down = JSON.stringify({ heartbeat: { status: 0, msg: "connect ECONNREFUSED" }, monitor: { name: "NAS", url: "http://nas.lan" }, msg: "[NAS] [🔴 Down] connect ECONNREFUSED" });
  const job = await deliver("/webhook/uptime-kuma", { raw: down, headers: { "content-type": "application/json", "x-webhook-secret": secret("uptime-kuma") } });
  expect(job).toMatchObject({ sender: "uptime-kuma", conversationId: "NAS", message: "Uptime Kuma: [NAS] [🔴 Down] connect ECONNREFUSED" });
  const test = JSON.stringify({ heartbeat: null, monitor: null, msg: "Uptime Kuma Webhook Testing" });
  const ping = await deliver("/webhook/uptime-kuma", { raw: test, headers: { "content-type": "application/json", "x-webhook-secret": secret("uptime-kuma") } });
  expect(ping).toMatchObject({ conversationId: "uptime", message: "Uptime Kuma: Uptime Kuma Webhook Testing" });
});
