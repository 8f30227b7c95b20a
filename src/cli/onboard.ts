import * as p from "@clack/prompts";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { newToken } from "../auth/tokens";
import { databaseUrl, ensureHome, loadConfig, readConfigFile, servicePaths, writeConfigFile, type Env, type Paths } from "../config/load";
import type { Config, ConfigLayer } from "../config/schema";
import { StartupError } from "../errors";
import { openAiLlm } from "../llm/openai";
import { openDatabase } from "../store/db";
import { ensureOwner, OWNER_ID } from "../store/users";
import { MemoryService } from "../memory/service";
import { parseFlags } from "./args";
import { ONBOARD_USAGE } from "./usage";
import { allInterfaces, webhookExposure } from "./exposure";
import { connectHost } from "./instance";
import { selfCommand } from "./self";

const OLLAMA_URL = "http://127.0.0.1:11434/v1";
const CHECK_TIMEOUT_MS = 5_000;

interface LlmChoice {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
}

export async function onboard(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    {
      "non-interactive": { type: "boolean" },
      force: { type: "boolean" },
      "llm-base-url": { type: "string" },
      "llm-api-key": { type: "string" },
      "llm-model": { type: "string" },
      "skip-check": { type: "boolean" },
      webhook: { type: "boolean" },
      "webhook-host": { type: "string" },
      home: { type: "string" },
    },
    ONBOARD_USAGE,
  );
  if (f.help) {
    process.stdout.write(ONBOARD_USAGE);
    return 0;
  }
  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const flagged: LlmChoice = clean({
    baseUrl: f["llm-base-url"] as string | undefined,
    apiKey: f["llm-api-key"] as string | undefined,
    model: f["llm-model"] as string | undefined,
  });
  const webhookFlag = f.webhook || f["webhook-host"] !== undefined ? { host: (f["webhook-host"] as string | undefined) ?? "0.0.0.0" } : undefined;
  if (existsSync(paths.config) && !f.force) {
    if (Object.keys(flagged).length || webhookFlag) return applyFlags(paths, env, flagged, f["skip-check"] === true, webhookFlag);
    process.stdout.write(
      `Already onboarded: ${paths.config} exists. Change a setting with --llm-base-url, --llm-api-key or --llm-model, or run \`service onboard --force\` to do it all again.\n`,
    );
    return 0;
  }
  const current = loadConfig(paths, env);
  const given: LlmChoice = {
    baseUrl: (f["llm-base-url"] as string | undefined) ?? current.llm.baseUrl,
    apiKey: (f["llm-api-key"] as string | undefined) ?? current.llm.apiKey,
    model: (f["llm-model"] as string | undefined) ?? current.llm.model,
  };
  const interactive = !f["non-interactive"] && process.stdin.isTTY && process.stdout.isTTY;

  let llm: LlmChoice;
  let webhook: WebhookChoice | undefined;
  if (interactive) {
    const chosen = await askLlm(given);
    if (!chosen) return 1;
    llm = chosen;
    const asked = await askWebhook(current.http);
    if (asked === null) return 1;
    webhook = asked;
  } else {
    llm = given;
    if (llm.baseUrl && !f["skip-check"]) {
      await requireEndpoint(llm);
    }
    webhook = webhookFlag;
  }

  ensureHome(paths);
  const file = readConfigFile(paths);
  const layer: ConfigLayer = { ...file, llm: clean(llm) };
  if (webhook) layer.http = webhookOn(file, current, webhook);
  writeConfigFile(paths, layer);
  const config = loadConfig(paths, env);
  const database = await openDatabase(databaseUrl(config, paths), config.database.authToken);
  await ensureOwner(database.db);
  // the owner's identity files (AGENTS.md, SOUL.md, USER.md, IDENTITY.md), unless they exist;
  // vectors, if an embedding model is set, are filled in by `serve`
  await new MemoryService({ db: database.db }).seedIdentity(OWNER_ID);
  database.close();

  let token = existsSync(paths.token) ? readFileSync(paths.token, "utf8").trim() : "";
  if (!token) {
    token = newToken();
    writeFileSync(paths.token, token + "\n", { mode: 0o600 });
  }
  chmodSync(paths.token, 0o600);

  const base = `http://${config.gateway.host}:${config.gateway.port}`;
  const defaultHome = paths.home === servicePaths({ ...env, SERVICE_HOME: "" }).home;
  const exposure = webhookExposure(config);
  const summary = [
    `Service home: ${paths.home}`,
    `LLM: ${llm.model ? `${llm.model} at ${llm.baseUrl ?? "the OpenAI API"}` : "not configured yet (set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL)"}`,
    `Instance token: ${paths.token}`,
    config.http.enabled
      ? `Webhook channel: http://${connectHost(config.http.host)}:${config.http.port}/webhook, header X-Webhook-Secret: ${config.http.webhookSecret} (http.webhookSecret in config.json)`
      : "Webhook channel: off (service onboard --force --webhook, or HTTP_ENABLED and HTTP_WEBHOOK_SECRET)",
    ...(exposure ? [`Note: ${exposure}`] : []),
    `Start it with: ${selfCommand(env)} serve${defaultHome ? "" : ` --home ${paths.home}`}`,
    `Then sign in at: ${base}/login?token=${token}`,
  ];
  if (interactive) {
    p.note(summary.join("\n"), "Ready");
    p.outro("Onboarding done.");
  } else {
    process.stdout.write(summary.join("\n") + "\n");
  }
  return 0;
}

/** Checks the endpoint answers GET /models (a StartupError when it does not); notes an unlisted model. */
async function requireEndpoint(llm: LlmChoice): Promise<void> {
  const check = await checkEndpoint(llm);
  if (!check.ok) throw new StartupError(`the LLM endpoint ${llm.baseUrl} did not answer GET /models: ${check.error}`);
  if (llm.model && check.models.length && !check.models.includes(llm.model)) {
    process.stdout.write(`note: ${llm.baseUrl} does not list the model ${llm.model}; using it anyway\n`);
  }
}

/**
 * `onboard` with --llm-* flags on a home that is already onboarded: the flags go into
 * config.json (checked like a first onboarding) and the output says what changed.
 */
async function applyFlags(paths: Paths, env: Env, flagged: LlmChoice, skipCheck: boolean, webhook?: WebhookChoice): Promise<number> {
  const file = readConfigFile(paths);
  const before = (file.llm ?? {}) as LlmChoice;
  const after = { ...before, ...flagged };
  const changes = (Object.keys(flagged) as (keyof LlmChoice)[])
    .filter((k) => before[k] !== after[k])
    // a key is never printed, only that it changed
    .map((k) => (k === "apiKey" ? "llm.apiKey: changed" : `llm.${k}: ${before[k] ?? "(unset)"} → ${after[k]}`));
  const current = webhook ? loadConfig(paths, env) : undefined;
  const http = webhook && current ? webhookOn(file, current, webhook) : file.http;
  if (webhook && current) {
    const was = current.http;
    if (!was.enabled) changes.push("http.enabled: false → true");
    if (was.host !== webhook.host) changes.push(`http.host: ${was.host} → ${webhook.host}`);
    if (http?.webhookSecret && http.webhookSecret !== file.http?.webhookSecret) changes.push(`http.webhookSecret: made, ${http.webhookSecret} (senders send it as X-Webhook-Secret)`);
  }
  if (!changes.length) {
    process.stdout.write(`Already onboarded, and ${paths.config} already has these settings: nothing changed.\n`);
    return 0;
  }
  if (!skipCheck && after.baseUrl && Object.keys(flagged).length) await requireEndpoint(after);
  writeConfigFile(paths, { ...file, ...(Object.keys(flagged).length ? { llm: { ...file.llm, ...flagged } } : {}), ...(http ? { http } : {}) });
  process.stdout.write(`Updated ${paths.config}:\n${changes.map((c) => `  ${c}`).join("\n")}\nRestart \`service serve\` for it to take effect.\n`);
  const shadowed = (["LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"] as const).filter((name) => env[name]);
  if (shadowed.length) process.stdout.write(`note: ${shadowed.join(", ")} set in the environment win over config.json\n`);
  return 0;
}

const clean = (c: LlmChoice): LlmChoice =>
  Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined && v !== "")) as LlmChoice;

async function checkEndpoint(c: LlmChoice): Promise<{ ok: true; models: string[] } | { ok: false; error: string }> {
  try {
    const models = await openAiLlm({ ...c, model: c.model ?? "probe" }).listModels(AbortSignal.timeout(CHECK_TIMEOUT_MS));
    return { ok: true, models };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

async function ollamaAnswers(): Promise<boolean> {
  try {
    const res = await fetch(`${OLLAMA_URL}/models`, { signal: AbortSignal.timeout(700) });
    return res.ok;
  } catch {
    return false;
  }
}

/** The interactive part: endpoint, key and model, with the endpoint checked on the spot. */
async function askLlm(given: LlmChoice): Promise<LlmChoice | undefined> {
  p.intro("service onboard");
  const ollama = await ollamaAnswers();
  if (ollama) p.log.info(`An Ollama server answers at ${OLLAMA_URL}; it is the default below.`);
  const stop = (v: unknown): v is symbol => {
    if (p.isCancel(v)) {
      p.cancel("Onboarding cancelled; nothing was written.");
      return true;
    }
    return false;
  };
  let baseUrl = given.baseUrl ?? (ollama ? OLLAMA_URL : "https://api.openai.com/v1");
  let apiKey = given.apiKey ?? "";
  for (;;) {
    // the current value is a placeholder: Enter keeps it, typing replaces it (never appends to it)
    const url = await p.text({
      message: `OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, ...); Enter keeps ${baseUrl}`,
      placeholder: baseUrl,
      defaultValue: baseUrl,
      validate: (v) => (!v || /^https?:\/\/\S+$/.test(v) ? undefined : "Enter an http:// or https:// URL"),
    });
    if (stop(url)) return undefined;
    baseUrl = url.replace(/\/+$/, "");
    const key = await p.password({ message: "API key (leave empty for local servers that need none)", mask: "*" });
    if (stop(key)) return undefined;
    if (key) apiKey = key;
    const spin = p.spinner();
    spin.start(`Checking ${baseUrl}/models`);
    const check = await checkEndpoint({ baseUrl, apiKey });
    if (check.ok) {
      spin.stop(`The endpoint answers with ${check.models.length} model(s).`);
      const model = check.models.length
        ? await p.select({
            message: "Model",
            options: check.models.slice(0, 50).map((m) => ({ value: m, label: m })),
            initialValue: given.model && check.models.includes(given.model) ? given.model : check.models[0],
          })
        : await modelName(given.model);
      if (stop(model)) return undefined;
      return { baseUrl, apiKey: apiKey || undefined, model: model as string };
    }
    spin.error(`The endpoint did not answer: ${check.error}`);
    const again = await p.confirm({ message: "Enter the endpoint again? (No keeps it unchecked)", initialValue: true });
    if (stop(again)) return undefined;
    if (!again) {
      const model = await modelName(given.model);
      if (stop(model)) return undefined;
      return { baseUrl, apiKey: apiKey || undefined, model };
    }
  }
}

/** The webhook channel as onboarding turns it on: the interface it listens on (a secret is made for it). */
interface WebhookChoice {
  host: string;
}

/**
 * config.json's `http` with the webhook channel on. A secret already chosen stays (senders
 * have it): config.json's, or HTTP_WEBHOOK_SECRET's, which stays in the environment only.
 */
function webhookOn(file: ConfigLayer, current: Pick<Config, "http">, webhook: WebhookChoice): ConfigLayer["http"] {
  const secret = file.http?.webhookSecret ?? (current.http.webhookSecret ? undefined : newToken());
  return { ...file.http, enabled: true, host: webhook.host, ...(secret ? { webhookSecret: secret } : {}) };
}

/** Whether to turn on the webhook channel, and on which interfaces; null when cancelled, undefined to leave it as it is. */
async function askWebhook(current: { enabled: boolean; host: string; port: number }): Promise<WebhookChoice | undefined | null> {
  const on = await p.confirm({
    message: `Turn on the webhook channel (POST /webhook on port ${current.port}, for Home Assistant, n8n, GitHub…)? A secret is made for it.`,
    initialValue: current.enabled,
  });
  if (p.isCancel(on)) return (p.cancel("Onboarding cancelled; nothing was written."), null);
  if (!on) return undefined;
  const host = await p.select({
    message: "Where may senders reach it from?",
    options: [
      { value: "0.0.0.0", label: "other machines too: all interfaces (0.0.0.0), anyone who reaches this machine and has the secret" },
      { value: "127.0.0.1", label: "this machine only (127.0.0.1)" },
    ],
    initialValue: allInterfaces(current.host) ? "0.0.0.0" : "127.0.0.1",
  });
  if (p.isCancel(host)) return (p.cancel("Onboarding cancelled; nothing was written."), null);
  return { host: host as string };
}

/** The model's name; a known one is the placeholder that Enter keeps. */
function modelName(current: string | undefined) {
  return p.text({
    message: current ? `Model name; Enter keeps ${current}` : "Model name",
    placeholder: current,
    defaultValue: current,
    validate: (v) => (v || current ? undefined : "Enter a model name"),
  });
}
