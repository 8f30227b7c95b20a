// The configuration reference of docs/configuration.md, written from the one schema: every key
// with its environment variable, its default and its description (scripts/config-reference.ts).
import { Kind, type TSchema } from "@sinclair/typebox";
import { ConfigSchema, DEFAULTS } from "./schema";

export interface ConfigKey {
  /** Dotted path in config.json, e.g. `gateway.port`. */
  path: string;
  env?: string;
  default: string;
  description: string;
}

/** Every key of the configuration, in schema order; objects are walked into, anything else is a key. */
export function configKeys(schema: TSchema = ConfigSchema, at = "", defaults: unknown = DEFAULTS): ConfigKey[] {
  return Object.entries(schema.properties as Record<string, TSchema>).flatMap(([name, s]) => {
    const path = at ? `${at}.${name}` : name;
    const value = (defaults as Record<string, unknown> | undefined)?.[name];
    if (s[Kind] === "Object") return configKeys(s, path, value);
    return [{ path, env: s.env as string | undefined, default: shown(value, s.defaultText as string | undefined), description: String(s.description ?? "") }];
  });
}

function shown(value: unknown, text: string | undefined): string {
  if (text) return text;
  if (value === undefined || (Array.isArray(value) && !value.length) || (value && typeof value === "object" && !Object.keys(value).length)) return "";
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** The Markdown table. */
export function configReference(): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    "| `config.json` key | variable | default | meaning |",
    "|---|---|---|---|",
    ...configKeys().map((k) => `| \`${k.path}\` | ${k.env ? `\`${k.env}\`` : ""} | ${esc(k.default)} | ${esc(k.description)} |`),
  ].join("\n");
}

export const REFERENCE_START = "<!-- config-reference: written by `bun run config:reference` from src/config/schema.ts; do not edit -->";
export const REFERENCE_END = "<!-- /config-reference -->";

/** The page with its reference section replaced by the table of the schema as it is now. */
export function withReference(page: string): string {
  const start = page.indexOf(REFERENCE_START);
  const end = page.indexOf(REFERENCE_END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md has no ${REFERENCE_START} … ${REFERENCE_END} section`);
  return `${page.slice(0, start + REFERENCE_START.length)}\n${configReference()}\n${page.slice(end)}`;
}
