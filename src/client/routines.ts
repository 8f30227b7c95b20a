// The routines API as its clients use it: the web UI's Routines page, the TUI's /routines and
// `service routines`. Browser-safe, like the chat client it rides on.
import type { RoutineCreate, RoutineList, RoutinePatch, RoutineRecord, RunList, RunRecord, RunStarted, SchedulePreview } from "../routines/wire";
import type { TUndefined } from "@sinclair/typebox";
import type { ChatClient } from "./http";

const q = encodeURIComponent;

export class RoutinesClient {
  constructor(private readonly client: ChatClient) {}

  list = async () => (await this.client.request<typeof RoutineList>("GET", "/api/routines")).routines;
  get = (id: string) => this.client.request<typeof RoutineRecord>("GET", `/api/routines/${q(id)}`);
  create = (body: RoutineCreate) => this.client.request<typeof RoutineRecord>("POST", "/api/routines", body);
  update = (id: string, patch: RoutinePatch) => this.client.request<typeof RoutineRecord>("PATCH", `/api/routines/${q(id)}`, patch);
  remove = (id: string) => this.client.request<TUndefined>("DELETE", `/api/routines/${q(id)}`);
  /** Runs it now, whatever its schedule. */
  run = async (id: string) => (await this.client.request<typeof RunStarted>("POST", `/api/routines/${q(id)}/run`)).run;
  runs = async (id: string, limit = 20) => (await this.client.request<typeof RunList>("GET", `/api/routines/${q(id)}/runs?limit=${limit}`)).runs;
  /** A schedule in words and its next three times; an ApiError (400) says what is wrong with it. */
  preview = (schedule: string, timezone?: string) =>
    this.client.request<typeof SchedulePreview>("POST", "/api/routines/preview", timezone ? { schedule, timezone } : { schedule });
}

/** A run in one line: when, and what came of it. */
export function runLine(r: RunRecord): string {
  const when = r.scheduled_for.slice(0, 19).replace("T", " ");
  const what = r.outcome === "skipped" ? `skipped (${r.reason})` : r.status === "completed" ? "completed" : r.status === "failed" ? `failed: ${r.error?.message ?? ""}` : (r.status ?? "ran");
  return `${when}${r.trigger === "manual" ? " (run now)" : ""}  ${what}`;
}
