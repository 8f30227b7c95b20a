import type { ChatClient } from "../client/http";
import { RoutinesClient, runLine } from "../client/routines";
import type { RoutineRecord } from "../routines/wire";
import { brief } from "./text";

/** `/routines`: the user's routines, each with its schedule in words, its next run and its last one. */
export async function routinesNotice(client: ChatClient): Promise<string> {
  const list = await new RoutinesClient(client).list();
  const where = `the web UI (${client.baseUrl}/routines) or service routines`;
  if (!list.length) return `No routines yet. Ask me ("remind me every weekday at 7 to …"), or add one in ${where}.`;
  return [`Routines (${list.length}):`, ...list.flatMap(lines), `Manage them in ${where}.`].join("\n");
}

function lines(r: RoutineRecord): string[] {
  const state = !r.enabled ? "paused" : r.next_run_at ? `next ${r.next_run_at.slice(0, 16).replace("T", " ")} UTC` : "done";
  const out = [`• ${r.name}: ${r.description}; ${state}`];
  if (r.last_run) out.push(`    last: ${runLine(r.last_run)}${r.last_run.response ? `: ${brief(r.last_run.response, 80)}` : ""}`);
  return out;
}
