import { databaseUrl, loadConfig, servicePaths, type Env } from "../config/load";
import { ServiceError } from "../errors";
import { openDatabase } from "../store/db";
import { OWNER_ID } from "../store/users";
import { Budgets } from "../usage/budgets";
import { usageFor } from "../usage/report";
import type { UsageReport } from "../usage/wire";
import { parseFlags, UsageError } from "./args";

export const USAGE_REPORT_USAGE = `Usage: service usage [options]

What the turns of every user cost, from the service's database (whether or not \`serve\` runs):
turns, tokens and USD, by day, user, model, channel or routine, with the budgets in force.

Options:
  --from DATE           first day (YYYY-MM-DD) or moment (ISO 8601); default: the 1st of this month
  --to DATE             last day or moment; default: now
  --by GROUP            day, user, model, channel or routine (default day)
  --user ID             only this user's turns
  --json                print the report as JSON (GET /api/usage's shape)
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text
`;

export async function usage(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    { from: { type: "string" }, to: { type: "string" }, by: { type: "string" }, user: { type: "string" }, json: { type: "boolean" }, home: { type: "string" } },
    USAGE_REPORT_USAGE,
  );
  if (f.help) {
    process.stdout.write(USAGE_REPORT_USAGE);
    return 0;
  }
  const env: Env = { ...process.env, ...(f.home ? { SERVICE_HOME: f.home as string } : {}) };
  const paths = servicePaths(env);
  const config = loadConfig(paths, env);
  const database = await openDatabase(databaseUrl(config, paths), config.database.authToken);
  try {
    const budgets = new Budgets({ db: database.db, instanceMonthlyUsd: config.budgets.monthlyUsd });
    const query = { from: f.from as string | undefined, to: f.to as string | undefined, group_by: f.by as string | undefined, user_id: f.user as string | undefined };
    const report = await usageFor({ db: database.db, budgets }, { userId: OWNER_ID, admin: true }, query);
    process.stdout.write(f.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
    return 0;
  } catch (e) {
    if (e instanceof ServiceError) throw new UsageError(e.message, USAGE_REPORT_USAGE);
    throw e;
  } finally {
    database.close();
  }
}

const usd = (x: number) => `$${x.toFixed(x !== 0 && Math.abs(x) < 0.01 ? 4 : 2)}`;

/** The report as a text table, the total last, then the budgets. */
function table(r: UsageReport): string {
  const head = [r.group_by, "turns", "input", "cached", "output", "reasoning", "cost"];
  const line = (key: string, t: UsageReport["total"]) => [key, t.turns, t.input_tokens, t.cached_tokens, t.output_tokens, t.reasoning_tokens, usd(t.cost_usd)].map(String);
  const rows = [head, ...r.rows.map((row) => line(row.key ?? "(none)", row)), line("total", r.total)];
  const widths = head.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const text = rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd());
  const out = [`Usage from ${r.from} to ${r.to}`, "", ...text];
  for (const b of r.budgets) out.push("", `${b.scope === "instance" ? "Instance" : "Owner's"} ${b.period === "day" ? "daily" : "monthly"} budget: ${usd(b.spent_usd)} of ${usd(b.limit_usd)}`);
  return `${out.join("\n")}\n`;
}
