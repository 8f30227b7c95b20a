import { contextBudget, type ContextBudget } from "../../context/budget";
import type { ConversationItem, ImageRef } from "../../conversation/items";
import type { InputItem } from "../../agent/turn-types";
import { InvalidRequest } from "../../errors";
import { attribute, wrapUntrusted } from "../../safety/injection";
import { findItem, getGate, ownThread } from "../../store/conversations";
import type { Services } from "../../services";
import type { CompactionSeal, SealedCompaction } from "./compaction-seal";
import { readInputFile, type FileText } from "./files";
import type { InputItemBody } from "./request";

/** What reading a caller's input items needs of the service, for one caller. */
export interface InputReader {
  /** An item of the caller's stored responses (`item_reference`). */
  lookup: (id: string) => Promise<ConversationItem | undefined>;
  /** A compaction item's content, when this service sealed it for this caller (`responses.compact`). */
  openCompaction: (encrypted: string) => SealedCompaction | undefined;
  /** The call the caller's thread waits on (its external-tool gate), if it waits on one. */
  awaited: (threadId: string) => Promise<string | undefined>;
  /** What a request may take: a file's text may take no more. */
  budget: ContextBudget;
}

export function inputReader(s: Services, userId: string, seal: CompactionSeal): InputReader {
  return {
    lookup: (id) => findItem(s.db, id, userId),
    openCompaction: (encrypted) => seal.open(userId, encrypted),
    awaited: async (threadId) => {
      if (!(await ownThread(s.db, userId, threadId))) return undefined;
      const gate = await getGate(s.db, threadId);
      return gate?.kind === "external_tool" ? gate.callId : undefined;
    },
    budget: contextBudget(s.agent.deps.context),
  };
}

/** What a compaction item stands for when it comes back as input. */
export const COMPACTION_HEADING =
  "[Summary of the earlier conversation: its turns were compacted into this summary, which stands in for them]";

/**
 * Input items as the agent stores them. A function_call_output answering a function_call of
 * the same input is history; one that answers none resumes the thread's pending call.
 * system and developer messages become instruction blocks. A file (`input_file`) becomes its
 * text, in a message of its own before the one it came with, marked untrusted: what a
 * document says is not the user's word. A compaction item becomes its summary. `field` names
 * the list in error messages (`input`, `items`).
 */
export async function inputItems(input: string | InputItemBody[], reader: InputReader, field = "input") {
  const messages: InputItem[] = [];
  const toolOutputs: { call_id: string; output: string; images?: ImageRef[] }[] = [];
  const system: string[] = [];
  if (typeof input === "string") return { messages: [{ role: "user" as const, content: input }], toolOutputs, system };
  const items: (InputItem | ConversationItem)[] = [];
  for (const [i, item] of input.entries()) {
    if (item.type === "item_reference") {
      const found = await reader.lookup(item.id);
      if (!found) throw new InvalidRequest(`\`${field}[${i}].id\` ${JSON.stringify(item.id)} is not an item of your stored responses.`);
      const { id: _, ...rest } = found;
      items.push(rest as InputItem);
    } else if (item.type === "reasoning") {
      // a model's reasoning is the client's record of it; the LLM here never sees it
    } else if (item.type === "compaction") {
      const sealed = reader.openCompaction(item.encrypted_content);
      if (!sealed) {
        throw new InvalidRequest(
          `\`${field}[${i}].encrypted_content\` is not a compaction this service made for you: it was changed, forged, or made by another instance or for another user.`,
        );
      }
      items.push({ role: "user", content: `${COMPACTION_HEADING}\n\n${sealed.summary}`, ...(sealed.untrusted ? { untrusted: true } : {}) });
    } else if (item.type === "function_call") {
      items.push({ type: "function_call", call_id: item.call_id, name: item.name, arguments: item.arguments, external: true });
    } else if (item.type === "function_call_output") {
      const { text, images } = typeof item.output === "string" ? { text: item.output, images: [] } : await partsOf(item.output, `${field}[${i}].output`, reader);
      items.push({ type: "function_call_output", call_id: item.call_id, output: text, ...(images.length ? { images } : {}) });
    } else {
      const { text, images, files } =
        typeof item.content === "string" ? { text: item.content, images: [], files: [] } : await partsOf(item.content, `${field}[${i}].content`, reader);
      items.push(...files.map(fileMessage));
      if (item.role === "system" || item.role === "developer") system.push(text);
      else if (text || images.length || !files.length) items.push({ role: item.role, content: text, ...(images.length && item.role === "user" ? { images } : {}) });
    }
  }
  const calls = new Set(items.flatMap((m) => (m.type === "function_call" ? [m.call_id] : [])));
  for (const m of items) {
    if (m.type === "function_call_output" && !calls.has(m.call_id)) toolOutputs.push({ call_id: m.call_id, output: m.output, ...(m.images ? { images: m.images } : {}) });
    else messages.push(m as InputItem);
  }
  return { messages, toolOutputs, system };
}

type Part = { type: string; text?: string; refusal?: string; image_url?: string; detail?: string | null; file_data?: string; filename?: string | null };

async function partsOf(parts: Part[], where: string, reader: InputReader): Promise<{ text: string; images: ImageRef[]; files: FileText[] }> {
  const texts: string[] = [];
  const images: ImageRef[] = [];
  const files: FileText[] = [];
  for (const [j, p] of parts.entries()) {
    if (p.type === "input_image") images.push({ url: p.image_url!, ...(p.detail ? { detail: p.detail } : {}) });
    else if (p.type === "input_file") files.push(await readInputFile({ file_data: p.file_data!, filename: p.filename }, `${where}[${j}]`, reader.budget));
    else texts.push(p.type === "refusal" ? p.refusal! : p.text!);
  }
  return { text: texts.join("\n"), images, files };
}

/** A file's text as the model reads it: untrusted data in the wrapper no text inside can close. */
function fileMessage(f: FileText): InputItem {
  const name = attribute(f.name);
  return { role: "user", content: wrapUntrusted("tool_output", `tool="input_file" file="${name}"`, `the attached file ${name}`, f.text), untrusted: true };
}

/**
 * A stateless client's replay of the call its thread waits on (LlamaIndex's
 * `trackPreviousResponses` sends the whole history, the pending `function_call` and its output
 * with `previous_response_id`): what comes up to that call the thread holds already, so only
 * what follows it is this request's input, and the output resumes the thread.
 */
export function afterReplay(input: InputItemBody[], awaited: string | undefined): InputItemBody[] {
  if (!awaited) return input;
  const at = input.findLastIndex((item) => item.type === "function_call" && item.call_id === awaited);
  return at < 0 ? input : input.slice(at + 1);
}
