import { Type, type Static } from "@sinclair/typebox";
import { InvalidRequest } from "../errors";
import type { ExternalTool } from "../conversation/items";
import { schemaProblems, sentence } from "../schema-problems";
import type { ToolRegistry } from "./registry";

export const MAX_TOOLS_BYTES = 16 * 1024;

/** A caller's function tool, in the flat Responses form (the nested chat-completions form is flattened to it first). */
export const CallerTool = Type.Object(
  {
    type: Type.Literal("function", { error: 'must be "function": no other tool type is supported.' }),
    name: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", error: "must match ^[A-Za-z0-9_-]{1,64}$." }),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], { error: "must be a string." })),
    parameters: Type.Object(
      {
        type: Type.Literal("object", { error: 'must be "object".' }),
        properties: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { error: "must be an object." })),
        required: Type.Optional(Type.Array(Type.String(), { error: "must be an array of names." })),
      },
      { error: "must be a JSON Schema object." },
    ),
  },
  { error: "must be an object." },
);
export type CallerTool = Static<typeof CallerTool>;

export const CallerTools = Type.Array(CallerTool, { error: "must be an array of tool definitions." });

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

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** `{type, function: {...}}` as `{type, ...}`; `parameters` left out as an empty object schema. */
function flat(entry: unknown): unknown {
  if (!isObject(entry)) return entry;
  const def = isObject(entry.function) ? { ...entry.function, type: entry.type } : entry;
  return { ...def, parameters: def.parameters ?? { type: "object", properties: {} } };
}

/**
 * Validates the `tools` of a request against `CallerTools`: function tools only, well-formed
 * unique names that shadow no registered action, at most 16 KiB of canonical JSON.
 */
export function parseCallerTools(raw: unknown, registry: ToolRegistry): ExternalTool[] {
  if (Array.isArray(raw) && Buffer.byteLength(canonicalJson(raw)) > MAX_TOOLS_BYTES) {
    throw new InvalidRequest("`tools` is larger than 16 KiB of canonical JSON.");
  }
  const tools = Array.isArray(raw) ? raw.map(flat) : raw;
  const [problem] = schemaProblems(CallerTools, tools);
  if (problem) throw new InvalidRequest(sentence({ ...problem, pointer: `/tools${problem.pointer}` }, "`tools`"));
  const seen = new Set<string>();
  return (tools as CallerTool[]).map(({ name, description, parameters }, i) => {
    if (seen.has(name)) throw new InvalidRequest(`\`tools[${i}].name\` ${name} is used twice; tool names must be unique.`);
    seen.add(name);
    if (registry.isRegisteredAction(name)) {
      throw new InvalidRequest(`\`tools[${i}].name\` ${name} shadows a registered action of the agent; choose another name.`);
    }
    return { name, description: description ?? "", parameters };
  });
}
