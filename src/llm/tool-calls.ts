import { randomUUID } from "node:crypto";
import type { ToolCall } from "./types";

/** One entry of a chunk's `delta.tool_calls`, as servers really send it: any field may be missing. */
export interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

interface Building {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Builds tool calls from streamed deltas the way the official `openai` SDK's stream helper
 * does, and survives what other servers send:
 * - `function.name` sets the name, it is never appended: Fireworks, NVIDIA NIM and
 *   llama-cpp-python repeat it on every delta
 *   (https://github.com/NousResearch/hermes-agent/pull/12230).
 * - a delta without `index` belongs to the call with the same `id`, or else continues the
 *   last call; a new `id` starts a new call, even at an index already used. Gemini's OpenAI
 *   endpoint omits `index` (https://github.com/open-webui/computer/issues/224) and proxies
 *   put parallel calls all at index 0 (https://github.com/NousResearch/hermes-agent/pull/12930).
 * - `arguments` sent as a JSON object is taken as that object: llama.cpp's server did so
 *   (https://github.com/ggml-org/llama.cpp/issues/20198).
 * - a call without an id gets one.
 */
export class ToolCallAssembler {
  readonly #calls: Building[] = [];
  readonly #byIndex = new Map<number, Building>();
  readonly #byId = new Map<string, Building>();

  /** The `tool_calls` of one delta. */
  add(deltas: unknown): void {
    if (!Array.isArray(deltas)) return;
    let fresh = false;
    for (const d of deltas as ToolCallDelta[]) {
      if (!d || typeof d !== "object") continue;
      this.#add(d, fresh);
      // entries after the first in one delta with neither index nor id are calls of their own
      fresh = true;
    }
  }

  get size(): number {
    return this.#calls.length;
  }

  calls(): ToolCall[] {
    return this.#calls.map((c) => ({ call_id: c.id || `call_${randomUUID().replaceAll("-", "")}`, name: c.name, arguments: c.arguments.trim() ? c.arguments : "{}" }));
  }

  #add(d: ToolCallDelta, fresh: boolean): void {
    const index = typeof d.index === "number" ? d.index : undefined;
    const id = typeof d.id === "string" && d.id ? d.id : undefined;
    const name = typeof d.function?.name === "string" ? d.function.name : "";
    const call = this.#find(index, id, name, fresh) ?? this.#start(index);
    if (id && !call.id) {
      call.id = id;
      this.#byId.set(id, call);
    }
    if (name) call.name = name;
    const args = d.function?.arguments;
    if (typeof args === "string") call.arguments += args;
    else if (args && typeof args === "object") call.arguments = JSON.stringify(args);
  }

  #find(index: number | undefined, id: string | undefined, name: string, fresh: boolean): Building | undefined {
    if (id && this.#byId.has(id)) return this.#byId.get(id);
    if (index !== undefined) {
      const at = this.#byIndex.get(index);
      return at && !(id && at.id && at.id !== id) ? at : undefined;
    }
    if (id || fresh) return undefined;
    const last = this.#calls.at(-1);
    // an index-less delta naming another tool than the last call's is a call of its own
    return last && !(name && last.name && name !== last.name) ? last : undefined;
  }

  #start(index: number | undefined): Building {
    const call = { id: "", name: "", arguments: "" };
    this.#calls.push(call);
    if (index !== undefined) this.#byIndex.set(index, call);
    return call;
  }
}
