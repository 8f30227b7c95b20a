import { extractText, getDocumentProxy } from "unpdf";
import type { ContextBudget } from "../../context/budget";
import { rawTextTokens } from "../../context/estimate";
import { InvalidRequest } from "../../errors";

/** A file sent in an `input_file` part, as its text. */
export interface FileText {
  name: string;
  type: string;
  text: string;
}

/** Media types besides text/* whose content is text. */
const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
  "application/x-javascript",
  "application/typescript",
  "application/sql",
  "application/x-sh",
  "application/x-httpd-php",
  "application/graphql",
  "application/x-ndjson",
]);

const isText = (type: string) => type.startsWith("text/") || TEXT_TYPES.has(type) || /\+(json|xml|yaml)$/.test(type);
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),([\s\S]*)$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const PDF_MAGIC = "%PDF-";

/**
 * Reads an `input_file` part's `file_data` (a data URL, or bare base64 with a `filename`) into
 * text: text files as UTF-8, PDFs through PDF.js (unpdf), pages apart by a blank line. Any other
 * kind is a 400 naming its type, and so is a text longer than a request may take. `where`
 * names the part in those messages (`input[0].content[1]`).
 */
export async function readInputFile(part: { file_data: string; filename?: string | null }, where: string, budget: ContextBudget): Promise<FileText> {
  const { declared, bytes } = decode(part.file_data, where);
  const name = part.filename || "file";
  const type = declared && declared !== "application/octet-stream" ? declared : sniff(bytes, part.filename ?? undefined);
  let text: string;
  if (type === "application/pdf") text = await pdfText(bytes, `\`${where}\` (${name})`);
  else if (isText(type)) {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new InvalidRequest(`\`${where}\` (${name}) says it is ${type} but is not UTF-8 text.`);
    }
  } else {
    throw new InvalidRequest(
      `\`${where}\` is a file of type ${type}, which is not supported: input_file takes text (text/*, JSON, XML, YAML…) and PDF` +
        (type.startsWith("image/") ? "; send an image as an input_image part." : "."),
    );
  }
  const tokens = rawTextTokens(text);
  if (tokens > budget.prompt) {
    throw new InvalidRequest(
      `\`${where}\` (${name}) holds about ${tokens} tokens of text, more than the ${budget.prompt} a request may take ` +
        `(LLM_CONTEXT_WINDOW ${budget.window} less ${budget.reserve} kept for the answer). Send a shorter file or a part of it.`,
      "context_length_exceeded",
    );
  }
  return { name, type, text };
}

/** The declared media type (lower case, without parameters) and the bytes of `file_data`. */
function decode(data: string, where: string): { declared?: string; bytes: Uint8Array } {
  const url = DATA_URL.exec(data);
  const payload = url ? url[3]! : data;
  if (url && !/;base64$/i.test(url[2]!)) {
    return { declared: url[1]!.toLowerCase() || "text/plain", bytes: new TextEncoder().encode(decodeURIComponent(payload)) };
  }
  const compact = payload.replace(/\s+/g, "");
  if (!BASE64.test(compact)) throw new InvalidRequest(`\`${where}.file_data\` must be a data URL (data:application/pdf;base64,…) or base64.`);
  return { declared: url?.[1]?.toLowerCase() || undefined, bytes: Buffer.from(compact, "base64") };
}

/** A type for bytes sent without one: a PDF by its signature, else by the file's name, else text if they decode as UTF-8. */
function sniff(bytes: Uint8Array, filename: string | undefined): string {
  if (Buffer.from(bytes.subarray(0, PDF_MAGIC.length)).toString("latin1") === PDF_MAGIC) return "application/pdf";
  const byName = filename ? Bun.file(filename).type.split(";")[0]! : "application/octet-stream";
  if (byName !== "application/octet-stream") return byName;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return "text/plain";
  } catch {
    return "application/octet-stream";
  }
}

async function pdfText(bytes: Uint8Array, what: string): Promise<string> {
  let pages: string[];
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>> | undefined;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }); // errors only: no warnings on stdout
    pages = (await extractText(pdf, { mergePages: false })).text;
  } catch (e) {
    throw new InvalidRequest(`${what} could not be read as a PDF: ${(e as Error).message}`);
  } finally {
    await pdf?.loadingTask.destroy().catch(() => {});
  }
  const text = pages.map((p) => p.trim()).filter(Boolean).join("\n\n");
  if (!text) throw new InvalidRequest(`${what} is a PDF without a text layer (a scan?); this service reads the text of PDFs, not their images.`);
  return text;
}
