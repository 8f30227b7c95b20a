// Keys of config.json that the configuration schema does not know: a typo (`"gatway"`) would
// otherwise be ignored without a word. Found by walking the one schema, so a new key never
// needs a second list.
import { Kind, type TSchema } from "@sinclair/typebox";
import { ConfigSchema } from "./schema";

export interface UnknownKey {
  /** Dotted path of the key, e.g. `gateway.prot`. */
  path: string;
  /** The nearest known key at the same place, when one is close. */
  suggestion?: string;
}

/** Every key of `layer` that the schema does not know, in document order. */
export function unknownKeys(layer: unknown, schema: TSchema = ConfigSchema): UnknownKey[] {
  const out: UnknownKey[] = [];
  walk(layer, schema, "", out);
  return out;
}

/** What follows a key's name in a warning when a known key is close: ` (did you mean "gateway"?)`. */
export const didYouMean = (k: UnknownKey): string => (k.suggestion ? ` (did you mean "${k.suggestion}"?)` : "");

/** The warning line for a key: `config.json: unknown key "gatway" is ignored (did you mean "gateway"?)`. */
export function unknownKeyWarning(file: string, k: UnknownKey): string {
  return `${file}: unknown key "${k.path}" is ignored${didYouMean(k)}`;
}

function walk(value: unknown, schema: TSchema, at: string, out: UnknownKey[]): void {
  if (value === null || typeof value !== "object") return;
  const kind = schema[Kind];
  if (kind === "Union") {
    // a key is known if one of the shapes knows it; walk the shape that knows the most keys
    const objects = (schema.anyOf as TSchema[]).filter((s) => s[Kind] === "Object");
    if (!objects.length || Array.isArray(value)) return;
    const keys = Object.keys(value);
    const best = objects.reduce((a, b) => (known(b, keys) > known(a, keys) ? b : a));
    return walk(value, best, at, out);
  }
  if (kind === "Array") {
    if (Array.isArray(value)) for (const [i, v] of value.entries()) walk(v, schema.items as TSchema, `${at}[${i}]`, out);
    return;
  }
  if (Array.isArray(value)) return;
  if (kind === "Record") {
    const inner = Object.values(schema.patternProperties as Record<string, TSchema>)[0]!;
    for (const [k, v] of Object.entries(value)) walk(v, inner, join(at, k), out);
    return;
  }
  if (kind !== "Object") return;
  const properties = schema.properties as Record<string, TSchema>;
  for (const [k, v] of Object.entries(value)) {
    if (k in properties) walk(v, properties[k]!, join(at, k), out);
    else {
      const near = nearest(k, Object.keys(properties));
      out.push({ path: join(at, k), ...(near ? { suggestion: join(at, near) } : {}) });
    }
  }
}

const join = (at: string, key: string) => (at ? `${at}.${key}` : key);
const known = (schema: TSchema, keys: string[]) => keys.filter((k) => k in (schema.properties as object)).length;

/** The closest name by edit distance (case-insensitive), if it is close enough to be a typo. */
function nearest(key: string, names: string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(1, Math.floor(Math.min(key.length, best.name.length) / 3)) ? best.name : undefined;
}

/** Damerau–Levenshtein distance (adjacent transpositions count as one edit). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
