import { configuredInstanceToken, loadConfig, servicePaths, type Env } from "../config/load";
import { parseFlags } from "./args";
import { configuredUrl, findInstance } from "./instance";
import type { StatusReply } from "../api/status-reply";
import { describeWindow } from "../llm/window";
import { describeBuild } from "../version";

export const STATUS_USAGE = `Usage: service status [options]

Says whether \`service serve\` is running for this service home, where, and how it is
(version and build, uptime, LLM and its context window, channels). Exit code 0 when it runs, 1 when it does not.

Options:
  --json                print JSON
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text
`;

export async function status(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { json: { type: "boolean" }, home: { type: "string" } }, STATUS_USAGE);
  if (f.help) {
    process.stdout.write(STATUS_USAGE);
    return 0;
  }
  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const config = loadConfig(paths, env);
  const instance = await findInstance(paths, config);
  if (!instance) {
    const where = configuredUrl(config);
    if (f.json) process.stdout.write(JSON.stringify({ running: false, home: paths.home }) + "\n");
    else process.stdout.write(`service is not running for ${paths.home}${where ? ` (nothing answers at ${where})` : ""}\n`);
    return 1;
  }
  // the details need the instance token; without it, that the service answers is all there is
  const token = configuredInstanceToken(env, config, paths)?.token;
  let api: StatusReply | undefined;
  if (instance.url && token) {
    try {
      const res = await fetch(`${instance.url}/api/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) });
      if (res.ok) api = (await res.json()) as StatusReply;
    } catch {}
  }
  const pid = instance.record?.pid ?? null;
  if (f.json) {
    process.stdout.write(JSON.stringify({ running: true, home: paths.home, url: instance.url, pid, webhook_url: instance.record?.webhook_url ?? null, status: api ?? null }, null, 2) + "\n");
    return 0;
  }
  const version = api?.build ? describeBuild(api.build) : (api?.version ?? instance.record?.version);
  const facts = [pid ? `pid ${pid}` : "", api ? `up ${duration(api.uptime_s)}` : ""].filter(Boolean).join(", ");
  const lines = [
    `service${version ? ` ${version}` : ""} is running${instance.url ? ` at ${instance.url}` : " with the gateway off"}${facts ? ` (${facts})` : ""}`,
    `  home: ${paths.home}`,
    ...(instance.url ? [`  web UI: ${instance.url}/`] : []),
    ...(instance.record?.webhook_url ? [`  webhook channel: ${instance.record.webhook_url}/webhook`] : []),
  ];
  if (api) {
    lines.push(`  LLM: ${api.llm.configured ? api.llm.model : "not configured"}`);
    if (api.llm.context_window) lines.push(`  context window ${describeWindow(api.llm.context_window)}`);
    lines.push(`  Responses revision ${api.revision}; channels: ${Object.entries(api.channels).filter(([, on]) => on).map(([name]) => name).join(", ") || "none"}`);
  } else if (instance.url) {
    lines.push("  (no instance token at hand for the details: set SERVICE_REBORN_WEBUI_TOKEN or keep webui-token in the home)");
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

function duration(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
