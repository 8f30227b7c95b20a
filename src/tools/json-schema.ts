import { Kind, Type, TypeRegistry, type TSchema, type TUnsafe } from "@sinclair/typebox";
import type { Ajv } from "ajv";

/**
 * Parameters given as a plain JSON Schema (MCP servers, extensions) rather than built with
 * TypeBox. The registry's `Value.Check` validates them with Ajv through this custom kind; a
 * schema Ajv cannot compile is passed through, and the tool's own server validates instead.
 */
const KIND = "JsonSchema";

type Check = (value: unknown) => string | undefined;
const checks = new WeakMap<object, Check>();
let ajv: Ajv | undefined;

/** Ajv with the formats MCP servers use (uri, date-time, ...), loaded on first use. */
function compiler(): Ajv {
  if (!ajv) {
    const { Ajv } = require("ajv") as typeof import("ajv");
    const addFormats = (require("ajv-formats") as { default: typeof import("ajv-formats").default }).default;
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
  }
  return ajv;
}

function checkFor(schema: TSchema): Check {
  let check = checks.get(schema);
  if (!check) {
    try {
      // only MCP and extension tools have raw JSON Schemas
      const ajv = compiler();
      const validate = ajv.compile({ ...schema });
      check = (value) => {
        if (validate(value)) return undefined;
        // Ajv says "data/a/b must be string, data must have required property 'x'"
        return ajv.errorsText(validate.errors).replace(/(^|, )data(\/| )/g, (_m, pre, sep) => pre + (sep === "/" ? "/" : "(root) "));
      };
    } catch {
      check = () => undefined;
    }
    checks.set(schema, check);
  }
  return check;
}

TypeRegistry.Set(KIND, (schema, value) => checkFor(schema as TSchema)(value) === undefined);

/**
 * Wraps a tool's raw JSON Schema for the registry. The `$schema` dialect marker is dropped
 * (some model providers reject it); the rest goes to the model as it is.
 */
export function jsonSchema(raw: Record<string, unknown>): TUnsafe<Record<string, unknown>> {
  const { $schema: _dialect, ...rest } = raw;
  const schema = { ...rest, type: "object", properties: rest.properties ?? {} };
  return Type.Unsafe<Record<string, unknown>>({ ...schema, [Kind]: KIND });
}

/** Why `value` does not fit a raw JSON Schema parameter set; undefined for TypeBox schemas or a fit. */
export function jsonSchemaProblem(schema: TSchema, value: unknown): string | undefined {
  return schema[Kind] === KIND ? checkFor(schema)(value) : undefined;
}
