import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";

/** An MCP tool answered with `isError`: its text becomes a tool error for the model. */
export class McpToolError extends Error {
  override name = "McpToolError";
}

const size = (base64: string) => {
  const bytes = Math.floor((base64.length * 3) / 4);
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
};

function describe(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${size(block.data)}]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${size(block.data)}]`;
    case "resource_link":
      return `[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ""}]`;
    case "resource": {
      const r = block.resource;
      if ("text" in r) return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]\n${r.text}`;
      return `[resource ${r.uri}: ${r.mimeType ?? "binary"}, ${size(r.blob)}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/**
 * The text the model sees: text content joined, other content summarised in brackets, the
 * structured content when there is nothing else. An `isError` result throws McpToolError.
 */
export function resultText(result: CallToolResult | { toolResult: unknown }): string {
  if ("toolResult" in result) return JSON.stringify(result.toolResult);
  const parts = (result.content ?? []).map(describe);
  if (!parts.length && result.structuredContent) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  if (result.isError) throw new McpToolError(text || "the tool reported an error");
  return text;
}
