import { Type } from "@sinclair/typebox";
import { ServiceError } from "../../errors";
import type { Routines } from "../../routines/service";
import { MAX_PROMPT, type RoutineRecord } from "../../routines/wire";
import { defineTool, type Tool } from "../tool";
import createDescription from "./missions.txt" with { type: "text" };

/** One line of a routine for the model: id, name, schedule in words, state and next run. */
function line(r: RoutineRecord): string {
  const state = r.enabled ? (r.next_run_at ? `next run ${r.next_run_at}` : "finished (its time has passed)") : "paused";
  return `- ${r.id}: "${r.name}", ${r.description} [${r.schedule}], ${state}`;
}

/** A refusal of the routines service (a bad schedule, a routine not found) is the model's to fix, said in its words. */
async function said<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ServiceError) throw new Error(e.message.replace(/`/g, ""));
    throw e;
  }
}

/**
 * The agent's own hold on its user's routines ("missions"): create one, list them, cancel
 * one. Creating asks the user's approval unless the operator says otherwise (tools.approval).
 */
export function missionTools(routines: Routines): Tool[] {
  return [
    defineTool({
      name: "mission_create",
      description: createDescription.trim(),
      approval: "ask",
      parameters: Type.Object({
        schedule: Type.String({ minLength: 1, maxLength: 200, description: 'When: "0 7 * * 1-5", "@daily", "every 2h" or "at 2026-12-24T18:00".' }),
        prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT, description: "What to do at each run, as an instruction to yourself." }),
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "A short name for the user's list." })),
        timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "IANA time zone of the schedule (Europe/Berlin); the machine's by default." })),
        conversation: Type.Optional(
          Type.Union([Type.Literal("new"), Type.Literal("same")], { description: '"same": every run continues one conversation (it remembers earlier runs); "new" (default): each run starts afresh.' }),
        ),
      }),
      async execute(args, ctx) {
        const r = await said(() => routines.create(ctx.userId, args));
        return `Scheduled mission ${r.id} "${r.name}": ${r.description}. Next runs: ${r.next_runs.join(", ") || "none"}.`;
      },
    }),
    defineTool({
      name: "mission_list",
      repeatable: true,
      description: "Lists the user's missions (scheduled routines): id, name, schedule and next run.",
      parameters: Type.Object({}),
      async execute(_args, ctx) {
        const all = await routines.list(ctx.userId);
        return all.length ? all.map(line).join("\n") : "The user has no missions.";
      },
    }),
    defineTool({
      name: "mission_cancel",
      description: "Cancels one of the user's missions for good (it is deleted, with its run history). mission_list gives the ids.",
      parameters: Type.Object({ id: Type.String({ minLength: 1, description: "The mission's id." }) }),
      async execute({ id }, ctx) {
        const r = await said(() => routines.get(ctx.userId, id));
        await said(() => routines.remove(ctx.userId, id));
        return `Cancelled mission ${id} "${r.name}".`;
      },
    }),
  ];
}
