import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { schemaProblems } from "../schema-problems";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WebAccess } from "../tools/builtin/web-guard";
import { allowEntryProblem, boundHostProblem, STRICT_ACCESS } from "./hosts";
import { DEFAULT_CPU_MS, DEFAULT_MEMORY_PAGES, MAX_CPU_MS, MAX_MEMORY_PAGES, PAGE_BYTES } from "./wasm/abi";

export const MANIFEST_FILE = "extension.json";
export const EXTENSION_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const TOOL_NAME = "^[A-Za-z0-9_-]{1,64}$";
/** What model providers accept as a function name: the agent tool name must fit it. */
const MAX_TOOL_NAME = 64;
const ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$";
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

export const ExtensionToolSpec = Type.Object({
  name: Type.String({ pattern: TOOL_NAME }),
  description: Type.String({ minLength: 1 }),
  /** A JSON Schema object, given to the model as the tool's parameters. */
  parameters: Type.Object({ type: Type.Literal("object") }),
});

/** An MCP server the extension bundles, started over stdio from the extension's folder. */
export const McpRuntime = Type.Object({
  type: Type.Literal("mcp"),
  command: Type.String({ minLength: 1 }),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** How long one tool call may take (default 60 s). */
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
});

/** A WebAssembly module the host runs in a sandbox (see wasm/abi.ts for its interface). */
export const WasmRuntime = Type.Object({
  type: Type.Literal("wasm"),
  /** Path of the module inside the extension's folder. */
  module: Type.String({ minLength: 1 }),
  network: Type.Optional(
    Type.Object({
      /** Hosts `host.http_get` may reach: `api.example.com`, `*.example.com`, `api.example.com:8443` (see hosts.ts). */
      allow: Type.Array(Type.String({ minLength: 1 })),
    }),
  ),
  limits: Type.Optional(
    Type.Object({
      /** Wall time of one call, HTTP included (default 10 s). */
      timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
      /** CPU time of one call (default 5 s, at most 60 s). */
      cpuMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CPU_MS })),
      /** The most 64 KiB pages of memory the module may have (default 4096: 256 MiB; at most 16384: 1 GiB). */
      memoryPages: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MEMORY_PAGES })),
    }),
  ),
});

export const NoCredentials = Type.Object({ type: Type.Literal("none") });

/**
 * The hosts a WebAssembly extension's credential is sent to (patterns as in the allow list,
 * each on it). Without it the credential is sent nowhere: an extension whose key went to
 * every host it may reach could hand it to any of them.
 */
const BoundHosts = Type.Optional(Type.Array(Type.String({ minLength: 1 })));

/**
 * An API key the operator enters once. The host puts it where the manifest says: an MCP
 * server gets it in the environment variable `env`; a WebAssembly tool's HTTP requests to
 * `hosts` carry it in `header` (default `Authorization: Bearer <key>`) or in the query
 * parameter `query`.
 */
export const ApiKeyCredentials = Type.Object({
  type: Type.Literal("api_key"),
  /** What the key is, as the person entering it knows it ("OpenWeather API key"). */
  name: Type.String({ minLength: 1 }),
  env: Type.Optional(Type.String({ pattern: ENV_NAME })),
  header: Type.Optional(Type.String({ pattern: HEADER_NAME })),
  /** Put before the key in `header` (default `Bearer ` for Authorization, else nothing). */
  prefix: Type.Optional(Type.String()),
  query: Type.Optional(Type.String({ minLength: 1 })),
  hosts: BoundHosts,
});

/** OAuth 2 authorization code with PKCE, per user, started from the web UI. */
export const OAuth2Credentials = Type.Object({
  type: Type.Literal("oauth2"),
  authorizeUrl: Type.String({ minLength: 1 }),
  tokenUrl: Type.String({ minLength: 1 }),
  clientId: Type.String({ minLength: 1 }),
  /** Only for providers that insist on a confidential client; PKCE needs none. */
  clientSecret: Type.Optional(Type.String({ minLength: 1 })),
  scopes: Type.Array(Type.String({ minLength: 1 })),
  /** The hosts the access token is sent to, as for an API key. */
  hosts: BoundHosts,
});

export const Credentials = Type.Union([NoCredentials, ApiKeyCredentials, OAuth2Credentials]);

export const Manifest = Type.Object({
  name: Type.String({ pattern: EXTENSION_NAME.source }),
  version: Type.String({ minLength: 1 }),
  description: Type.String(),
  tools: Type.Array(ExtensionToolSpec, { minItems: 1 }),
  runtime: Type.Union([McpRuntime, WasmRuntime]),
  /** Absent or `"none"` means the extension needs no credentials. */
  credentials: Type.Optional(Type.Union([Type.Literal("none"), Credentials])),
});

export type Manifest = Static<typeof Manifest>;
export type ExtensionToolSpec = Static<typeof ExtensionToolSpec>;
export type McpRuntime = Static<typeof McpRuntime>;
export type WasmRuntime = Static<typeof WasmRuntime>;
export type CredentialsSpec = Static<typeof Credentials>;
export type ApiKeyCredentials = Static<typeof ApiKeyCredentials>;
export type OAuth2Credentials = Static<typeof OAuth2Credentials>;

export class ManifestError extends Error {
  override name = "ManifestError";
}

/** The agent tool name of an extension's tool: `ext__<extension>__<tool>`. */
export const extensionToolName = (extension: string, tool: string) => `ext__${extension}__${tool}`;
/** Every extension tool name starts with this: caller tools may not use it. */
export const EXTENSION_TOOL_PREFIX = "ext__";

/** The credentials a manifest asks for, `"none"` spelled out. */
export function credentialsOf(m: Manifest): CredentialsSpec {
  return m.credentials === undefined || m.credentials === "none" ? { type: "none" } : m.credentials;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** The first problem, its field named with dots (`tools.0.name`) from `at`. */
function firstError(schema: TSchema, value: unknown, at: string): string | undefined {
  const [p] = schemaProblems(schema, value);
  if (!p) return undefined;
  const path = `${at}${p.pointer.replace(/\//g, ".")}`.replace(/^\./, "");
  return `${path || "extension.json"} ${p.says.replace(/\.$/, "")}`;
}

const mib = (pages: number) => (pages * PAGE_BYTES) / 1024 / 1024;
const size = (pages: number) => (mib(pages) >= 1024 ? `${mib(pages) / 1024} GiB` : `${mib(pages)} MiB`);

/** Limits past what any extension may have, said before TypeBox says "less or equal". */
function limitsProblem(limits: unknown): string | undefined {
  if (!isObject(limits)) return undefined;
  const { memoryPages, cpuMs } = limits;
  if (typeof memoryPages === "number" && memoryPages > MAX_MEMORY_PAGES) {
    return `runtime.limits.memoryPages: ${memoryPages} pages (${size(memoryPages)}) is more than an extension may have: at most ${MAX_MEMORY_PAGES} pages (${size(MAX_MEMORY_PAGES)}), default ${DEFAULT_MEMORY_PAGES} (${size(DEFAULT_MEMORY_PAGES)})`;
  }
  if (typeof cpuMs === "number" && cpuMs > MAX_CPU_MS) {
    return `runtime.limits.cpuMs: ${cpuMs} ms is more CPU time than an extension may have: at most ${MAX_CPU_MS} ms a call, default ${DEFAULT_CPU_MS}`;
  }
  return undefined;
}

/**
 * What is wrong with a parsed extension.json, in words an operator can act on (a TypeBox
 * union error only says "Expected union value"); undefined when it is well-formed. `access`
 * is the operator's `tools.web`: a loopback host it names may be on the allow list.
 */
export function manifestProblem(m: unknown, access: WebAccess = STRICT_ACCESS): string | undefined {
  if (!isObject(m)) return "extension.json must hold a JSON object";
  if (typeof m.name !== "string" || !EXTENSION_NAME.test(m.name)) {
    return `name must be 1 to 32 characters of a-z, 0-9, _ and -, starting with a letter or digit (got ${JSON.stringify(m.name)})`;
  }
  const base = Type.Omit(Manifest, ["runtime", "credentials"]);
  const problem = firstError(base, Object.fromEntries(Object.entries(m).filter(([k]) => k !== "runtime" && k !== "credentials")), "");
  if (problem) return problem.replace(/^\./, "");
  const tools = m.tools as ExtensionToolSpec[];
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name)) return `tools: ${t.name} is listed twice`;
    seen.add(t.name);
    if (extensionToolName(m.name, t.name).length > MAX_TOOL_NAME) {
      return `tools: ${extensionToolName(m.name, t.name)} is longer than ${MAX_TOOL_NAME} characters; shorten the tool or extension name`;
    }
  }

  const r = m.runtime;
  if (!isObject(r)) return `runtime must be an object: {"type":"mcp", "command", ...} or {"type":"wasm", "module", ...}`;
  if (r.type === "mcp") {
    const p = firstError(McpRuntime, r, "runtime");
    if (p) return p;
  } else if (r.type === "wasm") {
    const p = limitsProblem(r.limits) ?? firstError(WasmRuntime, r, "runtime");
    if (p) return p;
    const mod = r.module as string;
    if (mod.startsWith("/") || mod.split(/[\\/]/).includes("..")) return "runtime.module must be a path inside the extension's folder";
    for (const entry of (r as WasmRuntime).network?.allow ?? []) {
      const problem = allowEntryProblem(entry, access);
      if (problem) return `runtime.network.allow: ${JSON.stringify(entry)} ${problem}`;
    }
  } else {
    return `runtime.type must be "mcp" or "wasm"`;
  }

  const c = m.credentials;
  if (c === undefined || c === "none") return undefined;
  if (!isObject(c)) return `credentials must be "none" or an object with type "api_key" or "oauth2"`;
  const schema = c.type === "none" ? NoCredentials : c.type === "api_key" ? ApiKeyCredentials : c.type === "oauth2" ? OAuth2Credentials : undefined;
  if (!schema) return `credentials.type must be "none", "api_key" or "oauth2"`;
  const p = firstError(schema, c, "credentials");
  if (p) return p;
  if (Array.isArray(c.hosts)) {
    if (r.type === "mcp") return "credentials.hosts is for wasm runtimes: a bundled MCP server gets its key in env and makes its own requests";
    const allow = (r as WasmRuntime).network?.allow ?? [];
    for (const entry of c.hosts as string[]) {
      const problem = boundHostProblem(entry, allow);
      if (problem) return `credentials.hosts: ${JSON.stringify(entry)} ${problem}`;
    }
  }
  if (c.type === "api_key") {
    if (r.type === "mcp" && !c.env) return "credentials.env is needed: the bundled MCP server gets the key in that environment variable";
    if (c.header && c.query) return "credentials: give header or query, not both";
  }
  if (c.type === "oauth2") {
    for (const key of ["authorizeUrl", "tokenUrl"] as const) {
      const u = c[key] as string;
      if (!URL.canParse(u) || !/^https?:$/.test(new URL(u).protocol)) return `credentials.${key} must be an http:// or https:// URL`;
    }
    if (r.type === "mcp") {
      return "credentials: oauth2 needs a wasm runtime (OAuth tokens are per user; a bundled MCP server is one process for everyone: use api_key)";
    }
  }
  return undefined;
}

/**
 * What a well-formed manifest does that its author may not mean, for install to print and
 * the service to log: a WebAssembly extension's credential bound to no host is sent nowhere.
 */
export function manifestWarnings(m: Manifest): string[] {
  const c = credentialsOf(m);
  if (m.runtime.type !== "wasm" || c.type === "none" || c.hosts?.length) return [];
  const what = c.type === "api_key" ? "API key" : "OAuth access token";
  const example = m.runtime.network?.allow.find((a) => !a.startsWith("*.")) ?? "api.example.com";
  return [`credentials.hosts is not set, so its ${what} is sent to no host; list the hosts it is for in extension.json, e.g. "hosts": ["${example}"]`];
}

/** Reads and checks `<dir>/extension.json`; throws ManifestError saying what is wrong. */
export function readManifest(dir: string, access: WebAccess = STRICT_ACCESS): Manifest {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file)) throw new ManifestError(`${file} does not exist`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new ManifestError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  const problem = manifestProblem(parsed, access);
  if (problem) throw new ManifestError(`${file}: ${problem}`);
  return parsed as Manifest;
}
