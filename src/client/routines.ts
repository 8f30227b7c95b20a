// The routines API as its clients use it: the web UI's Routines page, the TUI's /routines and
// `service routines`. Browser-safe, like the chat client it rides on.
import type { RoutineCreate, RoutinePatch, RoutineRecord, RunRecord, SchedulePreview } from "../routines/wire";
import type { TUndefined, TUnsafe } from "@sinclair/typebox";
import type { ChatClient } from "./http";

const q = encodeURIComponent;

export class RoutinesClient {
  constructor(private readonly client: ChatClient) {}

  list = async () => (await this.client.request<TUnsafe<{ routines: RoutineRecord[] }>>("GET", "/api/routines")).routines;
  get = (id: string) => this.client.request<TUnsafe<RoutineRecord>>("GET", `/api/routines/${q(id)}`);
  create = (body: RoutineCreate) => this.client.request<TUnsafe<RoutineRecord>>("POST", "/api/routines", body);
  update = (id: string, patch: RoutinePatch) => this.client.request<TUnsafe<RoutineRecord>>("PATCH", `/api/routines/${q(id)}`, patch);
  remove = (id: string) => this.client.request<TUndefined>("DELETE", `/api/routines/${q(id)}`);
  /** Runs it now, whatever its schedule. */
  run = async (id: string) => (await this.client.request<TUnsafe<{ run: RunRecord }>>("POST", `/api/routines/${q(id)}/run`)).run;
  runs = async (id: string, limit = 20) => (await this.client.request<TUnsafe<{ runs: RunRecord[] }>>("GET", `/api/routines/${q(id)}/runs?limit=${limit}`)).runs;
  /** A schedule in words and its next three times; an ApiError (400) says what is wrong with it. */
  preview = (schedule: string, timezone?: string) =>
    this.client.request<TUnsafe<SchedulePreview>>("POST", "/api/routines/preview", timezone ? { schedule, timezone } : { schedule });
}

/** A run in one line: when, and what came of it. */
export function runLine(r: RunRecord): string {
  const when = r.scheduled_for.slice(0, 19).replace("T", " ");
  const what = r.outcome === "skipped" ? `skipped (${r.reason})` : r.status === "completed" ? "completed" : r.status === "failed" ? `failed: ${r.error?.message ?? ""}` : (r.status ?? "ran");
  return `${when}${r.trigger === "manual" ? " (run now)" : ""}  ${what}`;
}
