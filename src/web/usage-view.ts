// The Usage page: what turns cost, per day as a chart (Chart.js), grouped as a table, and the
// budgets in force with a warning from 80 % on. Self-contained: main.ts only routes to it.
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from "chart.js";
import type { UsageReport } from "../usage/wire";
import { api } from "./api";
import { fill, h } from "./dom";
import "./usage.css";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

type Group = "model" | "channel" | "user" | "routine";
const GROUPS: { value: Group; label: string }[] = [
  { value: "model", label: "Model" },
  { value: "channel", label: "Channel" },
  { value: "user", label: "User" },
  { value: "routine", label: "Routine" },
];
const RANGES = [
  { value: "month", label: "This month" },
  { value: "30", label: "Last 30 days" },
  { value: "90", label: "Last 90 days" },
];

const usd = (x: number) => `$${x.toFixed(x !== 0 && x < 0.01 ? 4 : 2)}`;
const count = (n: number) => n.toLocaleString();
const day = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;

/** Every day from `from` to `to`, both included (local dates). */
function daysBetween(from: Date, to: Date): string[] {
  const out: string[] = [];
  for (const d = new Date(from.getFullYear(), from.getMonth(), from.getDate()); d <= to; d.setDate(d.getDate() + 1)) out.push(day(d));
  return out;
}

export class UsageView {
  readonly el: HTMLElement;
  #range = h("select", { "aria-label": "Period" }, ...RANGES.map((r) => h("option", { value: r.value, text: r.label })));
  #group = h("select", { "aria-label": "Group by" }, ...GROUPS.map((g) => h("option", { value: g.value, text: `By ${g.label.toLowerCase()}` })));
  #budgets = h("div", { class: "usage-budgets" });
  #summary = h("p", { class: "usage-summary muted" });
  #canvas = h("canvas", { class: "usage-chart", role: "img", "aria-label": "Cost per day" });
  #table = h("table", { class: "usage-table" });
  #error = h("p", { class: "notice error", role: "alert", hidden: true });
  #chart: Chart<"bar"> | undefined;
  #seq = 0;

  constructor() {
    this.#range.addEventListener("change", () => void this.refresh());
    this.#group.addEventListener("change", () => void this.refresh());
    this.el = h(
      "section",
      { class: "usage-page", "aria-labelledby": "usage-title" },
      h("header", { class: "usage-head" }, h("h1", { id: "usage-title", text: "Usage" }), this.#range, this.#group),
      this.#error,
      this.#budgets,
      this.#summary,
      h("div", { class: "usage-chart-box" }, this.#canvas),
      this.#table,
    );
  }

  /** Reads the report again (when the page opens, and when a choice changes). */
  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    const now = new Date();
    const from = this.#range.value === "month" ? new Date(now.getFullYear(), now.getMonth(), 1) : new Date(now.getFullYear(), now.getMonth(), now.getDate() - Number(this.#range.value) + 1);
    const q = `from=${day(from)}&to=${day(now)}`;
    try {
      const [byDay, grouped] = await Promise.all([
        api.request<typeof UsageReport>("GET", `/api/usage?${q}&group_by=day`),
        api.request<typeof UsageReport>("GET", `/api/usage?${q}&group_by=${this.#group.value}`),
      ]);
      if (seq !== this.#seq) return;
      this.#error.hidden = true;
      this.#renderBudgets(byDay.budgets);
      this.#summary.textContent = `${count(byDay.total.turns)} turns, ${count(byDay.total.input_tokens)} input and ${count(byDay.total.output_tokens)} output tokens, ${usd(byDay.total.cost_usd)}.`;
      this.#renderChart(daysBetween(from, now), byDay);
      this.#renderTable(grouped);
    } catch (e) {
      if (seq !== this.#seq) return;
      this.#error.textContent = `The usage could not be read: ${(e as Error).message}`;
      this.#error.hidden = false;
    }
  }

  #renderBudgets(budgets: UsageReport["budgets"]): void {
    fill(
      this.#budgets,
      ...budgets.map((b) => {
        const share = b.limit_usd > 0 ? b.spent_usd / b.limit_usd : 1;
        const whose = b.scope === "instance" ? "The instance's" : "Your";
        const period = b.period === "day" ? "daily" : "monthly";
        const text = `${whose} ${period} budget: ${usd(b.spent_usd)} of ${usd(b.limit_usd)} (${Math.floor(share * 100)} %)${share >= 1 ? ". New turns fail until it is raised or renewed." : share >= 0.8 ? ". Nearly spent." : "."}`;
        return h(
          "div",
          { class: `usage-budget${share >= 1 ? " over" : share >= 0.8 ? " warn" : ""}`, role: share >= 0.8 ? "alert" : null },
          h("span", { text }),
          h("meter", { min: 0, max: 1, low: 0.8, high: 0.99, optimum: 0, value: Math.min(1, share), "aria-hidden": "true" }),
        );
      }),
    );
  }

  #renderChart(days: string[], report: UsageReport): void {
    const cost = new Map(report.rows.map((r) => [r.key, r.cost_usd]));
    const data = days.map((d) => cost.get(d) ?? 0);
    const labels = days.map((d) => d.slice(5));
    if (this.#chart) {
      this.#chart.data.labels = labels;
      this.#chart.data.datasets[0]!.data = data;
      this.#chart.update();
      return;
    }
    const accent = getComputedStyle(document.documentElement).getPropertyValue("--accent").trim() || "#4f5bd5";
    this.#chart = new Chart(this.#canvas, {
      type: "bar",
      data: { labels, datasets: [{ label: "Cost (USD)", data, backgroundColor: accent, borderRadius: 3 }] },
      options: {
        maintainAspectRatio: false,
        animation: false,
        scales: { y: { beginAtZero: true, ticks: { callback: (v) => usd(Number(v)) } } },
        plugins: { tooltip: { callbacks: { label: (c) => usd(Number(c.raw)) } } },
      },
    });
  }

  #renderTable(r: UsageReport): void {
    const label = GROUPS.find((g) => g.value === r.group_by)?.label ?? r.group_by;
    const row = (key: string, t: UsageReport["total"], total = false) =>
      h(
        "tr",
        total ? { class: "total" } : null,
        h(total ? "th" : "td", { text: key, scope: total ? "row" : null }),
        h("td", { text: count(t.turns) }),
        h("td", { text: count(t.input_tokens) }),
        h("td", { text: count(t.cached_tokens) }),
        h("td", { text: count(t.output_tokens) }),
        h("td", { text: count(t.reasoning_tokens) }),
        h("td", { text: usd(t.cost_usd) }),
      );
    fill(
      this.#table,
      h("thead", null, h("tr", null, ...[label, "Turns", "Input", "Cached", "Output", "Reasoning", "Cost"].map((c) => h("th", { text: c, scope: "col" })))),
      h("tbody", null, ...(r.rows.length ? r.rows.map((x) => row(x.key ?? "—", x)) : [h("tr", null, h("td", { colSpan: 7, class: "muted", text: "No turns in this period." }))])),
      h("tfoot", null, row("Total", r.total, true)),
    );
  }
}
