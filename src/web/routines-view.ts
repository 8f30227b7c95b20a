// The Routines page: the user's scheduled agent runs. The list on the side; the open routine
// with its schedule in words, its next three times, what it does, and its recent runs with
// their answers; a form to add or edit one, whose schedule is put into words as it is typed.
import { ApiError } from "../client/http";
import { RoutinesClient } from "../client/routines";
import type { RoutineRecord, RunRecord } from "../routines/wire";
import { api } from "./api";
import { ago, fill, h } from "./dom";
import { renderMarkdown } from "./markdown";
import "./routines.css";

const routinesApi = new RoutinesClient(api);
/** The browser's time zone: a new routine's default. */
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const PREVIEW_DELAY_MS = 250;

/** A time in the routine's zone, in words a person reads: "Mon 30 Mar, 07:00". */
function when(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" }).format(new Date(iso));
  } catch {
    return iso;
  }
}

export class RoutinesView {
  readonly el: HTMLElement;
  #routines: RoutineRecord[] = [];
  #open: string | null = null;
  #list = h("nav", { class: "doc-list routine-list", "aria-label": "Routines" });
  #pane = h("section", { class: "doc-pane routine-pane" });

  constructor() {
    const side = h(
      "aside",
      { class: "sidebar", "aria-label": "Routines" },
      h("div", { class: "sidebar-head" }, h("strong", { class: "routines-title", text: "Routines" }), h("button", { type: "button", class: "primary", text: "New", onclick: () => this.#edit(null) })),
      this.#list,
    );
    this.el = h("div", { class: "screen routines" }, side, this.#pane);
  }

  async refresh(): Promise<void> {
    try {
      this.#routines = await routinesApi.list();
    } catch (e) {
      fill(this.#list, h("p", { class: "notice error", text: (e as Error).message }));
      return;
    }
    this.#renderList();
  }

  /** Shows a routine (null: the list's first, or the empty page). */
  async open(id: string | null): Promise<void> {
    await this.refresh();
    this.#open = id ?? this.#routines[0]?.id ?? null;
    this.#renderList();
    const r = this.#routines.find((x) => x.id === this.#open);
    if (!r) return this.#empty();
    document.title = `${r.name} · Routines · service`;
    fill(this.#pane, this.#detail(r, []));
    try {
      const runs = await routinesApi.runs(r.id, 10);
      if (this.#open === r.id) fill(this.#pane, this.#detail(r, runs));
    } catch (e) {
      this.#notice((e as Error).message);
    }
  }

  #renderList(): void {
    if (!this.#routines.length) {
      fill(this.#list, h("p", { class: "muted small", text: "No routines yet." }));
      return;
    }
    fill(
      this.#list,
      ...this.#routines.map((r) =>
        h(
          "a",
          {
            class: `doc routine${r.id === this.#open ? " active" : ""}`,
            href: `/routines?id=${encodeURIComponent(r.id)}`,
            "aria-current": r.id === this.#open ? "page" : undefined,
            onclick: (e: MouseEvent) => {
              e.preventDefault();
              history.pushState(null, "", `/routines?id=${encodeURIComponent(r.id)}`);
              void this.open(r.id);
            },
          },
          h("span", { class: "thread-title", text: r.name }),
          h(
            "span",
            { class: "thread-meta" },
            h("span", { text: r.description }),
            r.enabled ? null : h("span", { class: "badge", text: "paused" }),
          ),
        ),
      ),
    );
  }

  #empty(): void {
    document.title = "Routines · service";
    fill(
      this.#pane,
      h(
        "div",
        { class: "empty" },
        h("h2", { text: "Routines" }),
        h("p", { text: "A routine runs a prompt on a schedule: “every weekday at 7, summarise the night's alerts”. Its answers are kept here, with every run." }),
        h("button", { type: "button", class: "primary", text: "New routine", onclick: () => this.#edit(null) }),
      ),
    );
  }

  #notice(text: string): void {
    this.#pane.prepend(h("p", { class: "notice error", role: "alert", text }));
  }

  #detail(r: RoutineRecord, runs: RunRecord[]): HTMLElement {
    const act = (label: string, fn: () => Promise<unknown>, cls = "") =>
      h("button", {
        type: "button",
        class: cls,
        text: label,
        onclick: async (e: Event) => {
          (e.target as HTMLButtonElement).disabled = true;
          try {
            await fn();
            await this.open(r.id);
          } catch (err) {
            (e.target as HTMLButtonElement).disabled = false;
            this.#notice((err as Error).message);
          }
        },
      });
    const remove = h("button", { type: "button", class: "ghost delete", text: "Delete" });
    const confirmBox = h(
      "div",
      { class: "doc-confirm", role: "alertdialog", hidden: true },
      h("span", { text: `Delete “${r.name}” and its run history?` }),
      h("button", {
        type: "button",
        class: "danger",
        text: "Delete for good",
        onclick: async () => {
          try {
            await routinesApi.remove(r.id);
          } catch (err) {
            if (!(err instanceof ApiError && err.status === 404)) return this.#notice((err as Error).message);
          }
          history.pushState(null, "", "/routines");
          await this.open(null);
        },
      }),
      h("button", { type: "button", class: "ghost", text: "Cancel", onclick: () => (confirmBox.hidden = true) }),
    );
    remove.addEventListener("click", () => (confirmBox.hidden = false));
    return h(
      "div",
      { class: "routine-detail" },
      h(
        "div",
        { class: "doc-head" },
        h("div", { class: "doc-heading" }, h("h1", { class: "routine-name", text: r.name }), r.enabled ? null : h("span", { class: "badge", text: "paused" })),
        h(
          "div",
          { class: "doc-tools" },
          act("Run now", () => routinesApi.run(r.id), "primary"),
          act(r.enabled ? "Pause" : "Resume", () => routinesApi.update(r.id, { enabled: !r.enabled })),
          h("button", { type: "button", text: "Edit", onclick: () => this.#edit(r) }),
          remove,
        ),
      ),
      confirmBox,
      h(
        "dl",
        { class: "routine-facts" },
        h("dt", { text: "Schedule" }),
        h("dd", {}, h("span", { class: "schedule-words", text: r.description }), " ", h("code", { text: r.schedule })),
        h("dt", { text: "Next runs" }),
        h(
          "dd",
          {},
          r.next_runs.length
            ? h("ol", { class: "next-runs" }, ...r.next_runs.map((t) => h("li", { text: when(t, r.timezone) })))
            : h("span", { class: "muted", text: r.enabled ? "none: its time has passed" : "paused" }),
        ),
        h("dt", { text: "Prompt" }),
        h("dd", { class: "routine-prompt", text: r.prompt }),
        h("dt", { text: "Settings" }),
        h("dd", { class: "muted small", text: `conversation ${r.conversation === "same" ? "continues" : "new each run"} · after downtime: ${r.catch_up} · ${r.timezone}${r.callback_url ? ` · callback ${r.callback_url}` : ""}` }),
      ),
      h("h2", { class: "runs-title", text: "Recent runs" }),
      runs.length ? h("ul", { class: "runs" }, ...runs.map((x, i) => this.#run(x, r.timezone, i === 0))) : h("p", { class: "muted", text: "No runs yet." }),
    );
  }

  /** A run: what came of it and when; its answer (the latest one's shown open). */
  #run(x: RunRecord, timeZone: string, open: boolean): HTMLElement {
    const state =
      x.outcome === "skipped" ? `skipped: ${x.reason === "missed" ? "the service was down" : x.reason === "overlap" ? "the previous run was still going" : x.reason}` : (x.status ?? "ran");
    const head = h(
      "span",
      { class: "run-head" },
      h("span", { class: `run-state ${x.outcome === "skipped" ? "skipped" : (x.status ?? "")}`, text: state }),
      h("span", { class: "muted small", text: `${when(x.scheduled_for, timeZone)}${x.trigger === "manual" ? " · run now" : ""} · ${ago(x.started_at)}` }),
    );
    if (!x.response && !x.error) return h("li", { class: "run" }, head);
    const body = h("div", { class: "run-answer md" });
    if (x.response) body.innerHTML = renderMarkdown(x.response);
    else body.append(h("p", { class: "notice error", text: x.error!.message }));
    return h("li", { class: "run" }, h("details", { open }, h("summary", {}, head), body));
  }

  /** The add/edit form; its schedule is put into words, with the next three times, as it is typed. */
  #edit(r: RoutineRecord | null): void {
    const field = (label: string, input: HTMLElement, hint?: string) => h("label", { class: "field" }, h("span", { text: label }), input, hint ? h("span", { class: "muted small", text: hint }) : null);
    const name = h("input", { type: "text", name: "name", value: r?.name ?? "", placeholder: "Morning alerts", maxLength: 200 });
    const schedule = h("input", { type: "text", name: "schedule", value: r?.schedule ?? "", placeholder: "0 7 * * 1-5", required: true, spellcheck: false, autocomplete: "off" });
    const zone = h("input", { type: "text", name: "timezone", value: r?.timezone ?? LOCAL_ZONE, spellcheck: false });
    const prompt = h("textarea", { name: "prompt", rows: 5, required: true, placeholder: "Summarise the night's alerts and tell me what needs doing." });
    prompt.value = r?.prompt ?? "";
    const conversation = h("select", { name: "conversation" }, h("option", { value: "new", text: "a new conversation each run" }), h("option", { value: "same", text: "one conversation, continued" }));
    conversation.value = r?.conversation ?? "new";
    const catchUp = h(
      "select",
      { name: "catch_up" },
      h("option", { value: "one", text: "run once" }),
      h("option", { value: "all", text: "run each missed one (at most 10)" }),
      h("option", { value: "skip", text: "skip them" }),
    );
    catchUp.value = r?.catch_up ?? "one";
    const preview = h("div", { class: "schedule-preview", role: "status", "aria-live": "polite" });
    const error = h("p", { class: "form-error", role: "alert" });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let seq = 0;
    const showPreview = async () => {
      const mine = ++seq;
      if (!schedule.value.trim()) return fill(preview, h("span", { class: "muted", text: "Type a schedule to see when it runs." }));
      try {
        const p = await routinesApi.preview(schedule.value, zone.value.trim() || undefined);
        if (mine !== seq) return;
        preview.classList.remove("bad");
        fill(preview, h("strong", { text: p.description }), p.next_runs.length ? h("ol", { class: "next-runs" }, ...p.next_runs.map((t) => h("li", { text: when(t, p.timezone) }))) : h("span", { class: "muted", text: " (never again)" }));
      } catch (e) {
        if (mine !== seq) return;
        preview.classList.add("bad");
        fill(preview, h("span", { text: (e as Error).message }));
      }
    };
    const queuePreview = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void showPreview(), PREVIEW_DELAY_MS);
    };
    schedule.addEventListener("input", queuePreview);
    zone.addEventListener("input", queuePreview);
    const save = h("button", { type: "submit", class: "primary", text: r ? "Save" : "Create" });
    const form = h(
      "form",
      {
        class: "routine-form",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          save.disabled = true;
          error.textContent = "";
          const body = {
            name: name.value.trim() || undefined,
            schedule: schedule.value.trim(),
            timezone: zone.value.trim() || undefined,
            prompt: prompt.value,
            conversation: conversation.value as "new" | "same",
            catch_up: catchUp.value as "skip" | "one" | "all",
          };
          try {
            const saved = r ? await routinesApi.update(r.id, body) : await routinesApi.create(body);
            history.pushState(null, "", `/routines?id=${encodeURIComponent(saved.id)}`);
            await this.open(saved.id);
          } catch (err) {
            error.textContent = (err as Error).message;
            save.disabled = false;
          }
        },
      },
      h("h1", { class: "routine-name", text: r ? `Edit ${r.name}` : "New routine" }),
      field("Name", name),
      field("Schedule", schedule, "cron (0 7 * * 1-5, @daily), every <n>s|m|h|d (every 30m), or at <date and time> (at 2026-12-24T18:00)"),
      preview,
      field("Time zone", zone),
      field("Prompt", prompt, "What the agent is asked at each run."),
      field("Conversation", conversation),
      field("After downtime, missed runs", catchUp),
      error,
      h("div", { class: "doc-tools" }, save, h("button", { type: "button", class: "ghost", text: "Cancel", onclick: () => void this.open(r?.id ?? null) })),
    );
    document.title = `${r ? "Edit" : "New"} routine · service`;
    fill(this.#pane, form);
    void showPreview();
    queueMicrotask(() => (r ? prompt : schedule).focus());
  }
}
