import agents from "./defaults/AGENTS.md" with { type: "text" };
import identity from "./defaults/IDENTITY.md" with { type: "text" };
import soul from "./defaults/SOUL.md" with { type: "text" };
import user from "./defaults/USER.md" with { type: "text" };
import type { MemoryService } from "./service";

/** A named document that shapes the agent (AGENTS.md, SOUL.md, USER.md, IDENTITY.md). */
export interface IdentityDocument {
  path: string;
  content: string;
}

/** Where identity documents come from; workspace memory provides them. */
export type IdentitySource = (userId: string) => Promise<IdentityDocument[]>;

/** The identity documents, in the order the system prompt shows them. */
export const IDENTITY_PATHS = ["AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md"] as const;

/** Whether a memory path is one of the identity documents. */
export const isIdentityPath = (path: string): boolean => (IDENTITY_PATHS as readonly string[]).includes(path);

/** What a user who has none of the identity documents starts with. */
export const DEFAULT_IDENTITY: Record<(typeof IDENTITY_PATHS)[number], string> = {
  "AGENTS.md": agents,
  "SOUL.md": soul,
  "USER.md": user,
  "IDENTITY.md": identity,
};

/** Most of one identity document that goes into the system prompt, in UTF-8 bytes. */
export const IDENTITY_FILE_BYTES = 8 * 1024;
/** Most of all identity documents together. */
export const IDENTITY_TOTAL_BYTES = 24 * 1024;

/**
 * The user's identity documents from workspace memory, fitted to the prompt budget. The
 * memory keeps a user's documents until they change, and the fitted ones are kept with them:
 * the same documents give the same array, which the system prompt is made once for.
 */
export function memoryIdentity(memory: MemoryService): IdentitySource {
  const fitted = new WeakMap<object, IdentityDocument[]>();
  return async (userId) => {
    const docs = await memory.identity(userId);
    let fit = fitted.get(docs);
    if (!fit) fitted.set(docs, (fit = fitIdentity(docs)));
    return fit;
  };
}

/** The documents a turn is told: without USER.md for a turn with no memory, else the same array (its prompt is made once). */
export const identityTold = (docs: IdentityDocument[], noMemory: boolean): IdentityDocument[] => (noMemory ? docs.filter((d) => d.path !== "USER.md") : docs);

/**
 * Orders the documents and cuts them to the budget: each at most `perFile` bytes and all
 * together at most `total`. Whatever is cut says so in a marker, and a document with no
 * budget left still appears with a marker: nothing disappears silently. Empty documents
 * (the user's way of switching one off) are left out.
 */
export function fitIdentity(
  docs: { path: string; content: string }[],
  perFile = IDENTITY_FILE_BYTES,
  total = IDENTITY_TOTAL_BYTES,
): IdentityDocument[] {
  const byPath = new Map(docs.map((d) => [d.path, d.content.trim()]));
  let left = total;
  const out: IdentityDocument[] = [];
  for (const path of IDENTITY_PATHS) {
    const content = byPath.get(path);
    if (!content) continue;
    const bytes = Buffer.byteLength(content, "utf8");
    const allowance = Math.min(perFile, left);
    if (bytes <= allowance) {
      out.push({ path, content });
      left -= bytes;
      continue;
    }
    const kept = cutUtf8(content, allowance);
    const keptBytes = Buffer.byteLength(kept, "utf8");
    left -= keptBytes;
    const why = allowance < perFile ? `the identity files may take ${total / 1024} KiB in all` : `each identity file may take ${perFile / 1024} KiB`;
    const marker = `[${path} truncated: ${keptBytes} of ${bytes} bytes shown, because ${why}. Read the whole file with memory_read.]`;
    out.push({ path, content: kept ? `${kept}\n\n${marker}` : marker });
  }
  return out;
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, ending at a line break when one is near. */
function cutUtf8(text: string, bytes: number): string {
  if (bytes <= 0) return "";
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(bytes));
  const prefix = text.slice(0, read);
  const newline = prefix.lastIndexOf("\n");
  return (newline >= prefix.length * 0.8 ? prefix.slice(0, newline) : prefix).trimEnd();
}
