import type { TSchema } from "@sinclair/typebox";
import { InvalidRequest } from "../errors";
import { schemaProblems, sentence } from "../schema-problems";

/** The 400 a request body that fails its route's schema gets: the sentence below, and the failing field's `code` option if it has one. */
export function invalidBody(schema: TSchema, value: unknown): InvalidRequest {
  return new InvalidRequest(describeInvalid(schema, value), schemaProblems(schema, value)[0]?.code ?? null);
}

/** The sentence a request body that fails its route's TypeBox schema gets in the 400 envelope: its first problem, named by the field's path (`input[1].call_id`). */
export function describeInvalid(schema: TSchema, value: unknown): string {
  if (schema.type === "object" && (!value || typeof value !== "object" || Array.isArray(value))) {
    return "The request body must be a JSON object.";
  }
  const [problem] = schemaProblems(schema, value);
  return problem ? sentence(problem, "The request body") : "The request body is malformed.";
}

/** The TypeBox schema behind an Elysia validator. */
export const schemaOf = (validator: unknown): TSchema => (validator as { schema?: TSchema }).schema ?? (validator as TSchema);
