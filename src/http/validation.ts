import { Kind, type TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";

/**
 * The sentence a request body that fails its route's TypeBox schema gets in the 400 envelope:
 * its first error, named by the field's path (`input[1].call_id`). A schema states what a
 * field must be in its `error` option ("must be a non-empty string."); a union is explained
 * by the variant the value meant (the one its JSON type, then its `type` field, points to).
 */
export function describeInvalid(schema: TSchema, value: unknown): string {
  if (schema.type === "object" && (!value || typeof value !== "object" || Array.isArray(value))) {
    return "The request body must be a JSON object.";
  }
  const found = firstError(schema, value, "");
  if (!found) return "The request body is malformed.";
  const { path, error } = found;
  const name = path ? `\`${fieldName(path)}\`` : "The request body";
  if (error.type === ValueErrorType.ObjectRequiredProperty) return `${name} is required.`;
  if (found.unsupportedType !== undefined) {
    return `\`${fieldName(path)}.type\` ${JSON.stringify(found.unsupportedType)} is not supported${error.schema.error ? `; ${name} ${error.schema.error}` : "."}`;
  }
  if (typeof error.schema.error === "string") return `${name} ${error.schema.error}`;
  return `${name} is malformed: ${error.message.toLowerCase()}.`;
}

/** The TypeBox schema behind an Elysia validator. */
export const schemaOf = (validator: unknown): TSchema => (validator as { schema?: TSchema }).schema ?? (validator as TSchema);

/** `/input/1/call_id` → `input[1].call_id` */
export function fieldName(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((name, p) => (/^\d+$/.test(p) ? `${name}[${p}]` : name ? `${name}.${p}` : p), "");
}

function firstError(schema: TSchema, value: unknown, prefix: string): { path: string; error: ValueError; unsupportedType?: unknown } | undefined {
  const error = Value.Errors(schema, value).First();
  if (!error) return undefined;
  const path = prefix + error.path;
  if (error.type !== ValueErrorType.Union) return { path, error };
  const variant = meantVariant(error.schema, error.value);
  if (variant) return firstError(variant, error.value, path);
  const type = (error.value as { type?: unknown } | null)?.type;
  return { path, error, unsupportedType: typeof type === "string" ? type : undefined };
}

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
