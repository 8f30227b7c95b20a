// The configuration reference in docs/configuration.md is written from the schema (bun run config:reference):
// this fails when they disagree, when a key has no description, or when a variable the schema
// names is not the one the environment layer reads.
import { expect, test } from "bun:test";
import { Kind, type TSchema } from "@sinclair/typebox";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { envLayer } from "../../src/config/load";
import { configKeys, REFERENCE_END, REFERENCE_START, withReference } from "../../src/config/reference";
import { ConfigSchema } from "../../src/config/schema";

const root = join(import.meta.dir, "../..");

test("docs/configuration.md's configuration reference is the schema's (run `bun run config:reference` after changing the schema)", () => {
  const page = readFileSync(join(root, "docs/configuration.md"), "utf8");
  expect({ start: page.includes(REFERENCE_START), end: page.includes(REFERENCE_END) }).toEqual({ start: true, end: true });
  const section = (text: string) => text.slice(text.indexOf(REFERENCE_START), text.indexOf(REFERENCE_END));
  expect(section(page)).toBe(section(withReference(page)));
});

test("every key of the schema has a description", () => {
  const keys = configKeys();
  expect(keys.length).toBeGreaterThan(30);
  for (const k of keys) expect(`${k.path}: ${k.description}`.length).toBeGreaterThan(k.path.length + 12);
});

/** The schema of a dotted path. */
function schemaAt(path: string): TSchema {
  return path.split(".").reduce<TSchema>((s, name) => (s.properties as Record<string, TSchema>)[name]!, ConfigSchema);
}

function sample(s: TSchema): string {
  switch (s[Kind]) {
    case "Integer":
    case "Number":
      return "7";
    case "Boolean":
      return "true";
    case "Array":
    case "Record":
      return "alpha,beta";
    case "Union":
      return String((s.anyOf as TSchema[])[0]!.const);
    default:
      return "https://sample.example/v1";
  }
}

test("each variable the schema names sets its key in the environment layer", () => {
  for (const k of configKeys().filter((k) => k.env)) {
    const layer = envLayer({ [k.env!]: sample(schemaAt(k.path)) }) as Record<string, any>;
    const value = k.path.split(".").reduce((o, name) => o?.[name], layer);
    expect({ key: k.path, set: value !== undefined && !(typeof value === "object" && !Array.isArray(value) && !Object.keys(value).length) }).toEqual({ key: k.path, set: true });
  }
});

test("every variable the environment layer reads is named in the schema (or is an alias the reference mentions)", () => {
  const source = readFileSync(join(root, "src/config/load.ts"), "utf8");
  const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
  const named = new Set(configKeys().flatMap((k) => (k.env ? [k.env] : [])));
  const aliases = new Set(configKeys().flatMap((k) => [...`${k.default} ${k.description}`.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
  const missing = [...read].filter((name) => name !== "SERVICE_HOME" && !named.has(name) && !aliases.has(name));
  expect(missing).toEqual([]);
});
