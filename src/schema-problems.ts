import { Kind, type TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";

/**
 * What is wrong with a value against a TypeBox schema, said for a person: request bodies,
 * caller tools, tool arguments, the configuration, webhook bodies and extension manifests
 * all explain their schema errors here. A schema states what a field must be in its `error`
 * option ("must be a non-empty string."); a union is explained by the variant the value
 * meant (the one its JSON type, then its `type` field, points to).
 */
export interface Problem {
  /** The field, as a JSON pointer (`/input/1/call_id`); "" for the value itself. */
  pointer: string;
  /** The rest of a sentence whose subject is the field: "is required.", "must be a non-empty string." */
  says: string;
  /** The failing schema's `code` option, when it has one (the envelope's `code`). */
  code?: string;
}

/** The first `max` problems of `value`, in the schema's order; none when it fits. */
export function schemaProblems(schema: TSchema, value: unknown, max = 1): Problem[] {
  const out: Problem[] = [];
  if (Value.Check(schema, value)) return out;
  for (const error of Value.Errors(schema, value)) {
    out.push(explain(error, ""));
    if (out.length >= max) break;
  }
  return out;
}

/** `/input/1/call_id` → `input[1].call_id` */
export function fieldName(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((name, p) => (/^\d+$/.test(p) ? `${name}[${p}]` : name ? `${name}.${p}` : p), "");
}

/** The problem as a sentence: "`input[1].call_id` is required."; `subject` names the value itself. */
export function sentence(p: Problem, subject: string): string {
  return `${p.pointer ? `\`${fieldName(p.pointer)}\`` : subject} ${p.says}`;
}

function explain(error: ValueError, prefix: string): Problem {
  const pointer = prefix + error.path;
  if (error.type === ValueErrorType.Union) {
    const variant = meantVariant(error.schema, error.value);
    if (variant) {
      const inner = Value.Errors(variant, error.value).First();
      if (inner) return explain(inner, pointer);
    }
    const type = (error.value as { type?: unknown } | null)?.type;
    if (typeof type === "string") {
      const must = typeof error.schema.error === "string" ? `; \`${fieldName(pointer)}\` ${error.schema.error}` : ".";
      return { pointer: `${pointer}/type`, says: `${JSON.stringify(type)} is not supported${must}`, ...code(error) };
    }
  }
  if (error.type === ValueErrorType.ObjectRequiredProperty) return { pointer, says: "is required." };
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return { pointer, says: "is not a field of this request." };
  if (typeof error.schema.error === "string") return { pointer, says: error.schema.error, ...code(error) };
  return { pointer, says: `is malformed: ${error.message.toLowerCase()}.`, ...code(error) };
}

const code = (error: ValueError) => (typeof error.schema.code === "string" ? { code: error.schema.code } : {});

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? "number" : typeof v);

function schemaType(s: TSchema): string | undefined {
  if (s[Kind] === "Literal") return jsonType(s.const);
  if (s[Kind] === "Record") return "object";
  if (s.type === "integer") return "number";
  return typeof s.type === "string" ? s.type : undefined;
}

/** The variant of a union a value was meant for: the only one of its JSON type, or the one its `type` names. */
function meantVariant(union: TSchema, value: unknown): TSchema | undefined {
  const candidates = ((union.anyOf ?? []) as TSchema[]).filter((s) => schemaType(s) === jsonType(value) || s[Kind] === "Unknown");
  if (candidates.length <= 1) return candidates[0];
  if (jsonType(value) !== "object") return undefined; // several literals: the union's own error says which
  const type = (value as { type?: unknown }).type;
  return (
    candidates.find((s) => s.properties?.type?.const === type) ??
    (type === undefined ? candidates.find((s) => s.properties?.type && !s.required?.includes("type")) : undefined)
  );
}
