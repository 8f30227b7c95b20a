import { Type } from "@sinclair/typebox";
import type { MemoryService } from "../../memory/service";
import { MAX_SEARCH_LIMIT } from "../../memory/service";
import { createPatch } from "diff";
import { isIdentityPath } from "../../memory/identity";
import { defineTool, type Tool } from "../tool";

const PATH_RULES = "A relative path with / between folders, like notes/garden.md (no leading /, no . or .. parts).";

/** The agent's workspace memory: search, read, write and list the user's documents. */
export function memoryTools(memory: MemoryService): Tool[] {
  return [
    defineTool({
      name: "memory_search",
      repeatable: true,
      description:
        "Search the user's workspace memory (their saved documents and notes) for text relevant to a query. " +
        "Returns the best matching documents with a snippet each, best first. Use it before answering " +
        "questions about earlier work, plans, facts or preferences the user may have saved.",
      parameters: Type.Object({
        query: Type.String({ minLength: 1, description: "What to look for, in plain words." }),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, description: "How many documents at most (default 10)." })),
      }),
      async execute({ query, limit }, ctx) {
        const results = await memory.search(ctx.userId, query, limit);
        if (!results.length) return `No memory documents match "${query}".`;
        const output = results.map((r, i) => `${i + 1}. ${r.path} (score ${r.score})\n   ${r.snippet.replace(/\s*\n\s*/g, " ")}`).join("\n");
        // a snippet of a document written after reading untrusted content is as untrusted as it
        return { output, untrusted: results.some((r) => r.tainted) };
      },
    }),
    defineTool({
      name: "memory_read",
      repeatable: true,
      description: `Read one document of the user's workspace memory in full. ${PATH_RULES}`,
      parameters: Type.Object({ path: Type.String({ description: "The document's path." }) }),
      async execute({ path }, ctx) {
        const doc = await memory.read(ctx.userId, path);
        if (!doc) throw new Error(`there is no memory document at ${path}; memory_tree lists the documents.`);
        return { output: doc.content || `(${path} is empty)`, untrusted: doc.tainted };
      },
    }),
    defineTool({
      name: "memory_write",
      description:
        "Create or overwrite a document in the user's workspace memory with the given content (the whole " +
        "document: read it first to keep what is there). AGENTS.md, SOUL.md, USER.md and IDENTITY.md are " +
        "your identity files, shown in your instructions on every turn; change them only when the user asks " +
        `or something lasting changes. ${PATH_RULES} At most 1 MiB.`,
      parameters: Type.Object({
        path: Type.String({ description: "The document's path." }),
        content: Type.String({ description: "The full new content." }),
      }),
      // an identity file shapes every later turn: its change is shown to the user, who approves it
      async confirm({ path, content }, ctx) {
        if (!isIdentityPath(path)) return undefined;
        const before = (await memory.read(ctx.userId, path))?.content ?? "";
        return { identityFile: path, diff: createPatch(path, before, content, "now", "after this change") };
      },
      async execute({ path, content }, ctx) {
        // an identity file changes only with the user's approval: what they approved is theirs
        const saved = await memory.write(ctx.userId, path, content, { tainted: ctx.tainted === true && !isIdentityPath(path) });
        return `Saved ${saved.path} (${saved.size} bytes).`;
      },
    }),
    defineTool({
      name: "memory_tree",
      repeatable: true,
      description: "List every document in the user's workspace memory with its size and last change, sorted by path.",
      parameters: Type.Object({}),
      async execute(_args, ctx) {
        const docs = await memory.tree(ctx.userId);
        if (!docs.length) return "The workspace memory is empty.";
        return docs.map((d) => `${d.path}  (${d.size} bytes, updated ${new Date(d.updatedAt).toISOString()})`).join("\n");
      },
    }),
  ];
}
