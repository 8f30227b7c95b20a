import type { ChatEvent, HistoryItem } from "./client";

/** What the transcript shows, one entry per message, tool call, prompt or notice. */
export type Entry =
  | { kind: "user"; text: string }
  | { kind: "assistant"; id: string; text: string; streaming: boolean }
  | { kind: "tool"; callId: string; name: string; args: string; output?: string; isError?: boolean }
  | { kind: "approval"; callId: string; tool: string; args: string; decision?: string }
  | { kind: "notice"; text: string }
  | { kind: "error"; text: string }
  /** Where the model's view starts to be a summary of the entries above. */
  | { kind: "compaction"; items: number; notes: number };

/** Text for blessed with tags on: braces in user content must not be read as tags. */
export const escapeTags = (s: string) => s.replace(/[{}]/g, (c) => (c === "{" ? "{open}" : "{close}"));

/** One line, at most `max` characters, for tool arguments and results. */
export function brief(s: string, max = 120): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A tool result without the <tool_output> envelope the model sees it in. */
export function toolResult(output: string): string {
  const m = /^\s*<tool_output\b[^>]*>([\s\S]*?)<\/tool_output>\s*$/.exec(output);
  return m ? m[1]! : output;
}

export class Transcript {
  entries: Entry[] = [];

  clear(): void {
    this.entries = [];
  }

  add(entry: Entry): void {
    this.entries.push(entry);
  }

  /** Replaces everything with a thread's stored history. */
  load(items: HistoryItem[]): void {
    this.entries = items.flatMap((i): Entry[] => {
      if (i.type === "compaction") return [{ kind: "compaction", items: i.summarised_items, notes: i.memory_notes }];
      if (i.type === "message") {
        if (i.role === "user") return [{ kind: "user", text: i.content }];
        const answer: Entry = { kind: "assistant", id: i.id, text: i.content, streaming: false };
        return i.status === "incomplete" ? [answer, { kind: "notice", text: "(cut short)" }] : [answer];
      }
      return [{ kind: "tool", callId: i.call_id, name: i.name, args: i.arguments, output: i.output ?? undefined }];
    });
  }

  /** The assistant message with this item id, created when it starts. */
  assistant(id: string): Extract<Entry, { kind: "assistant" }> {
    let e = this.entries.find((x): x is Extract<Entry, { kind: "assistant" }> => x.kind === "assistant" && x.id === id);
    if (!e) this.entries.push((e = { kind: "assistant", id, text: "", streaming: true }));
    return e;
  }

  tool(callId: string): Extract<Entry, { kind: "tool" }> | undefined {
    return this.entries.find((x): x is Extract<Entry, { kind: "tool" }> => x.kind === "tool" && x.callId === callId);
  }

  approval(callId: string): Extract<Entry, { kind: "approval" }> | undefined {
    return this.entries.find((x): x is Extract<Entry, { kind: "approval" }> => x.kind === "approval" && x.callId === callId);
  }

  /** Marks every message still streaming as finished (a turn ended or was cancelled). */
  settle(): void {
    for (const e of this.entries) if (e.kind === "assistant") e.streaming = false;
  }

  /** Follows one event of the thread shown. */
  apply(e: ChatEvent): void {
    switch (e.type) {
      case "message.started":
        this.assistant(e.item_id);
        break;
      case "message.delta":
        this.assistant(e.item_id).text += e.delta;
        break;
      case "message.completed": {
        const a = this.assistant(e.item_id);
        a.text = e.text;
        a.streaming = false;
        if (!a.text) this.entries.splice(this.entries.indexOf(a), 1); // a step with tool calls only
        break;
      }
      case "tool.started":
        if (!this.tool(e.call_id)) this.add({ kind: "tool", callId: e.call_id, name: e.name, args: e.arguments });
        break;
      case "tool.completed": {
        const tool = this.tool(e.call_id);
        if (tool) Object.assign(tool, { output: e.output, isError: e.is_error });
        else this.add({ kind: "tool", callId: e.call_id, name: "tool", args: "", output: e.output, isError: e.is_error });
        break;
      }
      case "approval.required":
        if (!this.approval(e.call_id)) this.add({ kind: "approval", callId: e.call_id, tool: e.tool, args: e.arguments });
        break;
      case "thread.compacted":
        // the mark's place is known once the turn is stored: the app reloads the history then
        this.add({ kind: "notice", text: "Earlier turns are being summarised to fit the model's context." });
        break;
      case "turn.completed":
        this.settle();
        if (e.status === "failed") {
          if (e.error?.code === "cancelled") this.add({ kind: "notice", text: "Cancelled." });
          else this.add({ kind: "error", text: e.error?.message ?? "The reply failed." });
        }
        break;
    }
  }

  /** The whole transcript as blessed-tagged text. */
  render(): string {
    return this.entries.map(renderEntry).join("\n\n");
  }
}

function renderEntry(e: Entry): string {
  switch (e.kind) {
    case "user":
      return `{cyan-fg}{bold}You:{/bold}{/cyan-fg} ${escapeTags(e.text)}`;
    case "assistant":
      return `{green-fg}{bold}Assistant:{/bold}{/green-fg} ${escapeTags(e.text)}${e.streaming ? "{yellow-fg}▍{/yellow-fg}" : ""}`;
    case "tool": {
      const head = `{magenta-fg}⚙ ${escapeTags(e.name)}{/magenta-fg} ${escapeTags(brief(e.args, 100))}`;
      if (e.output === undefined) return `${head} {yellow-fg}(running){/yellow-fg}`;
      const color = e.isError ? "red-fg" : "white-fg";
      return `${head}\n  {${color}}↳ ${escapeTags(brief(toolResult(e.output)) || "(no output)")}{/${color}}`;
    }
    case "approval": {
      const head = `{yellow-fg}{bold}Approval needed:{/bold}{/yellow-fg} ${escapeTags(e.tool)} ${escapeTags(brief(e.args, 100))}`;
      return e.decision
        ? `${head}\n  → ${escapeTags(e.decision)}`
        : `${head}\n  {bold}a{/bold} approve · {bold}d{/bold} deny · {bold}A{/bold} always allow ${escapeTags(e.tool)}`;
    }
    case "notice":
      return `{blue-fg}${escapeTags(e.text)}{/blue-fg}`;
    case "error":
      return `{red-fg}{bold}Error:{/bold} ${escapeTags(e.text)}{/red-fg}`;
    case "compaction": {
      const notes = e.notes ? `, ${e.notes} memory note${e.notes === 1 ? "" : "s"} saved` : "";
      return `{gray-fg}── earlier turns summarised for the model (${e.items} items${notes}) ──{/gray-fg}`;
    }
  }
}
