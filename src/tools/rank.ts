import MiniSearch from "minisearch";
import type { ToolSpec } from "../llm/types";
import { descriptionText } from "../safety/tool-description";

/** Words that say nothing about what a tool does. */
const STOP_WORDS = new Set(
  "a an and are as at be by can do for from i in into is it me my of on or please that the this to tool tools use using want with you your".split(" "),
);

/** Words of a name or a text: `mcp__memory__create_entities` and `getFileInfo` split into their parts. */
const words = (text: string) => text.split(/[^\p{L}\p{N}]+|(?<=\p{Ll})(?=\p{Lu})/u).filter(Boolean);

/**
 * The tools that best fit a query, best first, at most `limit`: a full-text ranking (BM25,
 * with prefixes and small typos) of their names and descriptions, the name counting most.
 * A query that is a tool's exact name finds that tool first. Tools that share no word with
 * the query are not found.
 */
export function rankTools(tools: ToolSpec[], query: string, limit: number): ToolSpec[] {
  const index = new MiniSearch<ToolSpec>({
    idField: "name",
    fields: ["name", "description"],
    // an untrusted server's description is ranked by its words, not by the wrapper around them
    extractField: (tool, field) => (field === "description" ? descriptionText(tool.description) : tool[field as "name"]),
    tokenize: words,
    processTerm: (term) => {
      const t = term.toLowerCase();
      return STOP_WORDS.has(t) ? null : t;
    },
    searchOptions: { boost: { name: 2 }, prefix: true, fuzzy: 0.2 },
  });
  index.addAll(tools);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const exact = byName.get(query.trim());
  const ranked = index.search(query).map((r) => byName.get(r.id as string)!);
  return [...new Set(exact ? [exact, ...ranked] : ranked)].slice(0, limit);
}
