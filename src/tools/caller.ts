import { InvalidRequest } from "../errors";
import type { ToolRegistry } from "./registry";
import type { ExternalTool } from "../conversation/items";

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_TOOLS_BYTES = 16 * 1024;

/** JSON with object keys sorted and no white space: the form the 16 KiB limit is measured on. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Validates the `tools` of a request: function tools only, well-formed unique names that
 * shadow no registered action, at most 16 KiB of canonical JSON. Accepts the flat Responses
 * form and the nested chat-completions form (`{type, function: {...}}`).
 */
export function parseCallerTools(raw: unknown, registry: ToolRegistry): ExternalTool[] {
  if (!Array.isArray(raw)) throw new InvalidRequest("`tools` must be an array of tool definitions.");
  if (Buffer.byteLength(canonicalJson(raw)) > MAX_TOOLS_BYTES) {
    throw new InvalidRequest("`tools` is larger than 16 KiB of canonical JSON.");
  }
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const at = `tools[${i}]`;
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw new InvalidRequest(`\`${at}\` must be an object.`);
    const t = entry as Record<string, unknown>;
    if (t.type !== "function") {
      throw new InvalidRequest(`\`${at}.type\` ${JSON.stringify(t.type ?? null)} is not supported; only "function" tools are accepted.`);
    }
    const def = (t.function && typeof t.function === "object" ? t.function : t) as Record<string, unknown>;
    const name = def.name;
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw new InvalidRequest(`\`${at}.name\` must match ^[A-Za-z0-9_-]{1,64}$.`);
    }
    if (seen.has(name)) throw new InvalidRequest(`\`${at}.name\` ${name} is used twice; tool names must be unique.`);
    seen.add(name);
    if (registry.isRegisteredAction(name)) {
      throw new InvalidRequest(`\`${at}.name\` ${name} shadows a registered action of the agent; choose another name.`);
    }
    if (def.description !== undefined && def.description !== null && typeof def.description !== "string") {
      throw new InvalidRequest(`\`${at}.description\` must be a string.`);
    }
    const parameters = def.parameters ?? { type: "object", properties: {} };
    if (!parameters || typeof parameters !== "object" || Array.isArray(parameters)) {
      throw new InvalidRequest(`\`${at}.parameters\` must be a JSON Schema object.`);
    }
    const schema = parameters as Record<string, unknown>;
    if (schema.type !== "object") throw new InvalidRequest(`\`${at}.parameters.type\` must be "object".`);
    if (schema.properties !== undefined && (typeof schema.properties !== "object" || Array.isArray(schema.properties) || !schema.properties)) {
      throw new InvalidRequest(`\`${at}.parameters.properties\` must be an object.`);
    }
    if (schema.required !== undefined && (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== "string"))) {
      throw new InvalidRequest(`\`${at}.parameters.required\` must be an array of names.`);
    }
    return { name, description: (def.description as string | undefined) ?? "", parameters: schema };
  });
}
