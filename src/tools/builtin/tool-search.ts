import { Type } from "@sinclair/typebox";
import { descriptionText } from "../../safety/tool-description";
import { defineTool } from "../tool";
import description from "./tool-search.txt" with { type: "text" };

export const TOOL_SEARCH = "tool_search";
const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 10;
/** A found tool's description is cut to its first sentence, at most this long. */
const SHORT_DESCRIPTION = 160;

function short(description: string): string {
  const text = descriptionText(description).trim();
  const first = /^[\s\S]*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;
  const line = first.replace(/\s+/g, " ");
  return line.length <= SHORT_DESCRIPTION ? line : `${line.slice(0, SHORT_DESCRIPTION - 1)}…`;
}

/**
 * Tools on demand: when the tools would take too much of the context window, the model is
 * offered this one instead, and the tools it finds in its next step (src/agent/offer.ts).
 */
export const toolSearchTool = defineTool({
  name: TOOL_SEARCH,
  repeatable: true,
  description: description.trim(),
  parameters: Type.Object({
    query: Type.String({ minLength: 1, description: "words of what the tool should do, or its name" }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `how many tools at most (default ${DEFAULT_LIMIT})` })),
  }),
  execute: async ({ query, limit }, ctx) => {
    if (!ctx.tools) throw new Error("there are no tools to search in this context");
    const { offered, more } = ctx.tools.find(query, limit ?? DEFAULT_LIMIT);
    if (!offered.length) {
      return `No tool matches "${query}". There are ${ctx.tools.count} tools: search again with other words for what you want to do.`;
    }
    const lines = offered.map((t) => `- ${t.name}: ${short(t.description)}`);
    const also = more.length ? `\nAlso matching, not offered for lack of room (search for one by its name to have it offered): ${more.join(", ")}` : "";
    return `Offered to you from your next step on; call the one you need by its name:\n${lines.join("\n")}${also}`;
  },
});
