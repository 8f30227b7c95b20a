import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { TurnBus, TurnEvent, TurnInfo } from "../agent/bus";
import type { Db } from "../store/db";
import { countJobsByStatus } from "../store/jobs";
import type { McpServerStatus } from "../mcp/status";

const JOB_STATES = ["queued", "running", "waiting", "completed", "failed"] as const;
const MCP_STATES: McpServerStatus["state"][] = ["starting", "ready", "restarting", "failed"];
/** Seconds: from a quick answer of a local model to a long agent turn. */
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];
const WAIT_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];

/**
 * The service's Prometheus metrics (`GET /metrics`), kept by prom-client in a registry of
 * their own. Turns, LLM requests, tokens, cost and tool calls are counted from the agent's
 * bus as they happen; jobs by status, MCP servers by state and the process's memory are read
 * when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #turns = new Counter({ name: "service_turns_total", help: "Turns that ended, by channel and status (completed, failed; lost: the service could not store it).", labelNames: ["channel", "status"], registers: [this.registry] });
  readonly #duration = new Histogram({ name: "service_turn_duration_seconds", help: "How long turns ran, from acceptance to being stored.", labelNames: ["channel"], buckets: TURN_BUCKETS, registers: [this.registry] });
  readonly #firstToken = new Histogram({ name: "service_time_to_first_token_seconds", help: "From a turn's acceptance to the first text of its answer.", labelNames: ["channel"], buckets: FIRST_TOKEN_BUCKETS, registers: [this.registry] });
  readonly #llm = new Counter({ name: "service_llm_requests_total", help: "LLM requests by the model that answered and outcome (ok, error, cancelled).", labelNames: ["model", "outcome"], registers: [this.registry] });
  readonly #tokens = new Counter({ name: "service_llm_tokens_total", help: "Tokens of LLM requests by model and type (input, cached, output, reasoning; cached is part of input, reasoning of output).", labelNames: ["model", "type"], registers: [this.registry] });
  readonly #cost = new Counter({ name: "service_llm_cost_usd_total", help: "What LLM requests cost (USD), by model.", labelNames: ["model"], registers: [this.registry] });
  readonly #tools = new Counter({ name: "service_tool_calls_total", help: "Built-in, MCP and extension tool calls by tool and outcome (ok, error).", labelNames: ["tool", "outcome"], registers: [this.registry] });
  readonly #queueWait = new Histogram({ name: "service_job_queue_wait_seconds", help: "How long jobs waited in the queue before their turn started.", buckets: WAIT_BUCKETS, registers: [this.registry] });
  readonly #routines = new Counter({ name: "service_routine_runs_total", help: "Routine runs by outcome (ran, skipped) and reason.", labelNames: ["outcome", "reason"], registers: [this.registry] });
  /** Turns that have not sent text yet; running tool calls by call id, with their tool and turn. */
  readonly #waitingFirstText = new Set<string>();
  readonly #calls = new Map<string, { tool: string; turn: string }>();
  /** The series of a channel and of a model, looked up once (prom-client hashes labels on every call otherwise). */
  readonly #channels = new Map<string, ReturnType<Metrics["channelSeries"]>>();
  readonly #models = new Map<string, ReturnType<Metrics["modelSeries"]>>();

  constructor(deps: { bus: TurnBus; db: Db; mcp?: () => McpServerStatus[] }) {
    const { registry } = this;
    new Gauge({
      name: "service_jobs",
      help: "Webhook jobs by status.",
      labelNames: ["status"],
      registers: [registry],
      async collect() {
        const counts = new Map((await countJobsByStatus(deps.db)).map((r) => [r.status, Number(r.count)]));
        for (const status of JOB_STATES) this.set({ status }, counts.get(status) ?? 0);
      },
    });
    new Gauge({
      name: "service_mcp_servers",
      help: "Configured MCP servers by state.",
      labelNames: ["state"],
      registers: [registry],
      collect() {
        const servers = deps.mcp?.() ?? [];
        for (const state of MCP_STATES) this.set({ state }, servers.filter((s) => s.state === state).length);
      },
    });
    new Gauge({
      name: "process_resident_memory_bytes",
      help: "Resident memory of the service's process.",
      registers: [registry],
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: "process_heap_used_bytes",
      help: "JavaScript heap in use.",
      registers: [registry],
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    deps.bus.subscribe((turn, e) => this.#hear(turn, e));
  }

  /** A routine's due tick: it ran, or was skipped (`reason`: missed, overlap, budget). */
  routineRun(outcome: "ran" | "skipped", reason?: string): void {
    this.#routines.inc({ outcome, reason: reason ?? "" });
  }

  /** The exposition text for a scrape. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private channelSeries(channel: string) {
    return {
      completed: this.#turns.labels(channel, "completed"),
      failed: this.#turns.labels(channel, "failed"),
      lost: this.#turns.labels(channel, "lost"),
      duration: this.#duration.labels(channel),
      firstToken: this.#firstToken.labels(channel),
    };
  }

  private modelSeries(model: string) {
    return {
      ok: this.#llm.labels(model, "ok"),
      error: this.#llm.labels(model, "error"),
      cancelled: this.#llm.labels(model, "cancelled"),
      input: this.#tokens.labels(model, "input"),
      cached: this.#tokens.labels(model, "cached"),
      output: this.#tokens.labels(model, "output"),
      reasoning: this.#tokens.labels(model, "reasoning"),
      cost: this.#cost.labels(model),
    };
  }

  #channel(channel: string) {
    let s = this.#channels.get(channel);
    if (!s) this.#channels.set(channel, (s = this.channelSeries(channel)));
    return s;
  }

  #model(model: string) {
    let s = this.#models.get(model);
    if (!s) this.#models.set(model, (s = this.modelSeries(model)));
    return s;
  }

  #hear(turn: TurnInfo, e: TurnEvent): void {
    switch (e.type) {
      case "turn.started":
        this.#waitingFirstText.add(turn.id);
        if (turn.origin?.queuedAt) this.#queueWait.observe(Math.max(0, turn.startedAt - turn.origin.queuedAt) / 1000);
        return;
      case "text.delta":
        if (this.#waitingFirstText.delete(turn.id)) this.#channel(turn.channel).firstToken.observe((Date.now() - turn.startedAt) / 1000);
        return;
      case "tool.started":
        this.#calls.set(e.item.call_id, { tool: e.item.name, turn: turn.id });
        return;
      case "tool.completed": {
        const tool = this.#calls.get(e.item.call_id)?.tool ?? "unknown";
        this.#calls.delete(e.item.call_id);
        this.#tools.inc({ tool, outcome: e.isError ? "error" : "ok" });
        return;
      }
      case "llm.request": {
        const s = this.#model(e.model);
        const u = e.usage;
        s[e.outcome].inc();
        if (!u) return;
        if (u.inputTokens) s.input.inc(u.inputTokens);
        if (u.cachedTokens) s.cached.inc(u.cachedTokens);
        if (u.outputTokens) s.output.inc(u.outputTokens);
        if (u.reasoningTokens) s.reasoning.inc(u.reasoningTokens);
        if (u.costUsd) s.cost.inc(u.costUsd);
        return;
      }
      case "turn.completed": {
        this.#waitingFirstText.delete(turn.id);
        // a call cut short with its turn never completes
        for (const [id, call] of this.#calls) if (call.turn === turn.id) this.#calls.delete(id);
        const s = this.#channel(turn.channel);
        s[e.result?.status ?? "lost"].inc();
        s.duration.observe((Date.now() - turn.startedAt) / 1000);
        return;
      }
    }
  }
}
