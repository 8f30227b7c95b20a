// The Activity page: turns running now that something else than the chat started (the
// Responses API, webhook jobs, routines), recent webhook jobs and routine runs with their
// status. Self-contained: main.ts routes to it and passes it the event stream's events.
import type { JobList, JobRecord } from "../channels/webhook/wire";
import type { ChatEvent } from "../gateway/chat-wire";
import type { RoutineList, RoutineRecord, RunList, RunRecord } from "../routines/wire";
import { api } from "./api";
import { ago, fill, h } from "./dom";
import "./usage.css";

const CHANNEL: Record<string, string> = { responses: "Responses API", webhook: "Webhook job", chat: "Chat" };
const badge = (status: string) => h("span", { class: `status-badge ${status}`, text: status });

export class ActivityView {
  readonly el: HTMLElement;
  /** Turns running now, by response id, as the event stream told them. */
  readonly #live = new Map<string, { channel: string; label: string; threadId: string; since: number }>();
  #liveBox = h("div");
  #jobsBox = h("div");
  #runsBox = h("div");
  #error = h("p", { class: "notice error", role: "alert", hidden: true });
  #refreshing: ReturnType<typeof setTimeout> | undefined;
  #seq = 0;

  constructor() {
    this.el = h(
      "section",
      { class: "activity-page", "aria-labelledby": "activity-title" },
      h("header", null, h("h1", { id: "activity-title", text: "Activity" }), h("button", { type: "button", class: "ghost", text: "Refresh", onclick: () => void this.refresh() })),
      this.#error,
      h("h2", { text: "Running now" }),
      this.#liveBox,
      h("h2", { text: "Recent jobs" }),
      this.#jobsBox,
      this.#runsBox,
    );
    this.#renderLive();
  }

  /** Every event of the user's stream: turns started elsewhere are shown while they run, and the lists follow. */
  handle(e: ChatEvent): void {
    if (e.type === "turn.started" && e.channel && e.channel !== "chat") {
      const label = e.routine_id ? "Routine run" : (CHANNEL[e.channel] ?? e.channel);
      this.#live.set(e.response_id, { channel: e.channel, label, threadId: e.thread_id, since: Date.now() });
      this.#renderLive();
      this.#soon();
    } else if (e.type === "turn.completed" && this.#live.delete(e.response_id)) {
      this.#renderLive();
      this.#soon();
    }
  }

  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    try {
      const [{ jobs }, runs] = await Promise.all([api.request<typeof JobList>("GET", "/api/jobs"), this.#routineRuns()]);
      if (seq !== this.#seq) return;
      this.#error.hidden = true;
      this.#renderJobs(jobs);
      this.#renderRuns(runs);
    } catch (e) {
      if (seq !== this.#seq) return;
      this.#error.textContent = `The activity could not be read: ${(e as Error).message}`;
      this.#error.hidden = false;
    }
  }

  /** The latest runs of the user's routines, newest first; undefined where the service has no routines. */
  async #routineRuns(): Promise<(RunRecord & { routine: string })[] | undefined> {
    let routines: RoutineRecord[];
    try {
      routines = (await api.request<typeof RoutineList>("GET", "/api/routines")).routines;
    } catch {
      return undefined;
    }
    const runs = await Promise.all(
      routines.map(async (r) => (await api.request<typeof RunList>("GET", `/api/routines/${encodeURIComponent(r.id)}/runs`)).runs.slice(0, 10).map((run) => ({ ...run, routine: r.name }))),
    );
    return runs.flat().sort((a, b) => b.scheduled_for.localeCompare(a.scheduled_for)).slice(0, 50);
  }

  /** A list read again shortly after a turn of another channel started or ended. */
  #soon(): void {
    clearTimeout(this.#refreshing);
    this.#refreshing = setTimeout(() => void this.refresh(), 300);
  }

  #renderLive(): void {
    if (!this.#live.size) return fill(this.#liveBox, h("p", { class: "muted", text: "Nothing is running that the chat did not start." }));
    fill(
      this.#liveBox,
      h(
        "table",
        { class: "activity-table live" },
        h("tbody", null, ...[...this.#live].map(([id, t]) => h("tr", { "data-response": id }, h("td", null, badge("running")), h("td", { text: t.label }), h("td", null, h("a", { href: `/?thread=${encodeURIComponent(t.threadId)}`, text: "Watch it" })), h("td", { class: "muted", text: ago(t.since) })))),
      ),
    );
  }

  #renderJobs(jobs: JobRecord[]): void {
    if (!jobs.length) return fill(this.#jobsBox, h("p", { class: "muted", text: "No webhook jobs yet." }));
    fill(
      this.#jobsBox,
      h(
        "table",
        { class: "activity-table jobs" },
        h("thead", null, h("tr", null, ...["Status", "Source", "From", "Answer or error", "Queued"].map((c) => h("th", { text: c, scope: "col" })))),
        h(
          "tbody",
          null,
          ...jobs.slice(0, 50).map((j) =>
            h(
              "tr",
              { "data-job": j.id },
              h("td", null, badge(j.status)),
              h("td", { text: j.source }),
              h("td", { text: j.user_id }),
              h("td", { class: "text", text: j.error ? `${j.error.code ?? "error"}: ${j.error.message}` : (j.response ?? ""), title: j.error?.message ?? j.response ?? "" }),
              h("td", { class: "muted", text: ago(j.created_at) }),
            ),
          ),
        ),
      ),
    );
  }

  #renderRuns(runs: (RunRecord & { routine: string })[] | undefined): void {
    if (!runs) return fill(this.#runsBox);
    fill(
      this.#runsBox,
      h("h2", { text: "Routine runs" }),
      runs.length
        ? h(
            "table",
            { class: "activity-table runs" },
            h("thead", null, h("tr", null, ...["Outcome", "Routine", "Status", "Scheduled"].map((c) => h("th", { text: c, scope: "col" })))),
            h(
              "tbody",
              null,
              ...runs.map((r) =>
                h("tr", null, h("td", null, badge(r.outcome), r.reason ? ` ${r.reason}` : ""), h("td", { text: r.routine }), h("td", null, r.status ? badge(r.status) : ""), h("td", { class: "muted", text: ago(r.scheduled_for) })),
              ),
            ),
          )
        : h("p", { class: "muted", text: "No routine has run yet." }),
    );
  }
}
