import { isAbsolute, resolve } from "node:path";
import { InvalidRequest, NotFound } from "../errors";
import type { McpConnection } from "../mcp/connection";
import { loadConnection } from "../mcp/manager";
import type { Db } from "../store/db";
import { jsonSchema } from "../tools/json-schema";
import type { Logger } from "../log";
import type { ToolRegistry } from "../tools/registry";
import type { WebAccess } from "../tools/builtin/web-guard";
import type { Tool } from "../tools/tool";
import { CredentialStore } from "./credentials";
import { checkWasmModule, listInstalled, type Installed } from "./installed";
import {
  credentialsOf,
  EXTENSION_TOOL_PREFIX,
  extensionToolName,
  manifestWarnings,
  type CredentialsSpec,
  type Manifest,
  type McpRuntime,
  type WasmRuntime,
} from "./manifest";
import { SecretSet } from "./redaction";
import { DEFAULT_CPU_MS, DEFAULT_TIMEOUT_MS } from "./wasm/abi";
import { runWasmTool } from "./wasm/host";
import type { BoundCredential } from "./wasm/network";
import { usageMeasurable } from "./wasm/usage";

/** A tool that cannot run until its extension is connected: where the user does that. */
export interface AuthNeed {
  extension: string;
  url: string;
}

export interface ExtensionInfo {
  name: string;
  version: string | null;
  description: string;
  enabled: boolean;
  runtime: "mcp" | "wasm" | null;
  tools: string[];
  credentials: CredentialsSpec["type"];
  /** For an API key the instance's; for OAuth this user's. Always true without credentials. */
  authorized: boolean;
  /** `loaded` (wasm), an MCP server's state or `waiting` (for its key), `disabled`, or `error`. */
  state: string;
  error: string | null;
}

interface Loaded {
  name: string;
  dir: string;
  manifest: Manifest;
  credentials: CredentialsSpec;
  wasm?: { path: string; minPages: number; maxPages: number };
  mcp?: McpConnection;
}

export interface ExtensionManagerOptions {
  home: string;
  db: Db;
  registry: ToolRegistry;
  /** The operator's `tools.web`: the private-address guard of `web_fetch` holds for extensions too. */
  access: WebAccess;
  log: Logger;
  /** The web UI page that connects an extension (OAuth), for a gate of this thread. */
  connectUrl: (extension: string, threadId?: string) => string;
}

/**
 * The installed extensions of the service home. Enabled ones have their tools registered as
 * `ext__<extension>__<tool>`: run in the WebAssembly sandbox, or by the MCP server the
 * extension bundles. Installing, enabling and removing happen in the CLI; `serve` reads
 * the home once when it starts.
 */
export class ExtensionManager {
  /** Credentials seen so far; the agent's safety layer redacts them (see `guard`). */
  readonly secrets = new SecretSet();
  readonly credentials: CredentialStore;
  #installed: Installed[] = [];
  readonly #loaded = new Map<string, Loaded>();
  /** Agent tool name → extension name. */
  readonly #owners = new Map<string, string>();

  constructor(private readonly o: ExtensionManagerOptions) {
    this.credentials = new CredentialStore(o.db, o.home, (s) => this.secrets.add(s), o.log);
    o.registry.reservePrefix(EXTENSION_TOOL_PREFIX);
  }

  /** Reads the installed extensions and registers the tools of the enabled ones. */
  async load(): Promise<void> {
    this.#installed = listInstalled(this.o.home, this.o.access);
    for (const ext of this.#installed) {
      if (!ext.enabled) continue;
      if (!ext.manifest) {
        this.o.log.warn(`extension ${ext.name}: not loaded: ${ext.error}`, { extension: ext.name });
        continue;
      }
      try {
        this.#register(ext.name, ext.dir, ext.manifest);
        for (const warning of manifestWarnings(ext.manifest)) this.o.log.warn(`extension ${ext.name}: ${warning}`, { extension: ext.name });
      } catch (e) {
        ext.error = (e as Error).message;
        this.o.log.warn(`extension ${ext.name}: not loaded: ${ext.error}`, { extension: ext.name });
      }
    }
    for (const key of await this.credentials.instanceKeys()) this.secrets.add(key);
    if (this.#loaded.size) this.o.log.info(`extensions: ${[...this.#loaded.keys()].join(", ")}`, { extensions: [...this.#loaded.keys()] });
    if ([...this.#loaded.values()].some((e) => e.wasm) && !usageMeasurable()) {
      this.o.log.warn("extensions: this system has no /proc, so WebAssembly calls are limited in wall time and module memory only, not in CPU time");
    }
  }

  /** Starts the MCP servers of extensions that have what they need. */
  start(): void {
    for (const ext of this.#loaded.values()) if (ext.manifest.runtime.type === "mcp") void this.#startMcp(ext);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#loaded.values()].map((e) => e.mcp?.stop()));
  }

  /** The loaded (enabled, valid) extension of this name. */
  get(name: string): Loaded | undefined {
    return this.#loaded.get(name);
  }

  async list(userId: string): Promise<ExtensionInfo[]> {
    return Promise.all(
      this.#installed.map(async (ext): Promise<ExtensionInfo> => {
        const m = ext.manifest;
        const credentials = m ? credentialsOf(m).type : "none";
        const loaded = this.#loaded.get(ext.name);
        return {
          name: ext.name,
          version: m?.version ?? null,
          description: m?.description ?? "",
          enabled: ext.enabled,
          runtime: m?.runtime.type ?? null,
          tools: m ? m.tools.map((t) => extensionToolName(ext.name, t.name)) : [],
          credentials,
          authorized: await this.#authorized(ext.name, credentials, userId),
          state: !ext.enabled ? "disabled" : !loaded ? "error" : this.#state(loaded),
          error: ext.error ?? loaded?.mcp?.error ?? (loaded && this.#state(loaded) === "waiting" ? "waits for its API key" : null),
        };
      }),
    );
  }

  #state(ext: Loaded): string {
    if (ext.manifest.runtime.type === "wasm") return "loaded";
    return ext.mcp?.state ?? "waiting";
  }

  /** Whether this tool may run for this user now; else where the user connects its extension. */
  readonly authorization = async (tool: string, userId: string, threadId: string): Promise<AuthNeed | undefined> => {
    const name = this.#owners.get(tool);
    const ext = name ? this.#loaded.get(name) : undefined;
    if (ext?.credentials.type !== "oauth2") return undefined;
    if (await this.credentials.tokens(ext.name, userId, ext.credentials)) return undefined;
    return { extension: ext.name, url: this.o.connectUrl(ext.name, threadId) };
  };

  /** Stores the instance's API key of an extension; its MCP server restarts with it. */
  async setApiKey(name: string, key: string): Promise<void> {
    const ext = this.#require(name);
    if (ext.credentials.type !== "api_key") throw new InvalidRequest(`The extension ${name} does not take an API key.`);
    if (!key.trim()) throw new InvalidRequest("The API key is empty.");
    await this.credentials.setApiKey(name, key.trim());
    if (ext.manifest.runtime.type === "mcp") {
      await ext.mcp?.stop();
      ext.mcp = undefined;
      await this.#startMcp(ext);
    }
  }

  /** Starts the OAuth flow of an extension for a user; returns the authorization server's URL. */
  async connect(name: string, userId: string, redirectUri: string): Promise<string> {
    const ext = this.#require(name);
    if (ext.credentials.type !== "oauth2") throw new InvalidRequest(`The extension ${name} does not connect with OAuth.`);
    return this.credentials.startOAuth(name, userId, ext.credentials, redirectUri);
  }

  /** Finishes an OAuth flow from its callback; says whose grant of which extension it was. */
  finishOAuth(state: string, code: string): Promise<{ extension: string; userId: string }> {
    return this.credentials.finishOAuth(state, code, (name) => {
      const c = this.#loaded.get(name)?.credentials;
      return c?.type === "oauth2" ? c : undefined;
    });
  }

  async disconnect(name: string, userId: string): Promise<void> {
    const ext = this.#require(name);
    if (ext.credentials.type !== "oauth2") throw new InvalidRequest(`The extension ${name} does not connect with OAuth.`);
    await this.credentials.disconnect(name, userId);
  }

  #require(name: string): Loaded {
    const ext = this.#loaded.get(name);
    if (!ext) throw new NotFound(`No enabled extension is named ${name}.`);
    return ext;
  }

  async #authorized(name: string, type: CredentialsSpec["type"], userId: string): Promise<boolean> {
    if (type === "none") return true;
    if (type === "api_key") return (await this.credentials.apiKey(name)) !== undefined;
    return this.credentials.hasTokens(name, userId);
  }

  #register(name: string, dir: string, manifest: Manifest): void {
    const ext: Loaded = { name, dir, manifest, credentials: credentialsOf(manifest) };
    if (manifest.runtime.type === "wasm") {
      const { path, minPages, maxPages } = checkWasmModule(dir, manifest as Manifest & { runtime: WasmRuntime });
      ext.wasm = { path, minPages, maxPages };
      const c = ext.credentials;
      if (c.type === "oauth2" && c.clientSecret) this.secrets.add(c.clientSecret);
    }
    // a module with an allow list, or an MCP server (a process that can reach anything), has
    // network access: what it answers comes from outside, and what it is sent may go out
    const networked = manifest.runtime.type === "mcp" || (manifest.runtime.network?.allow?.length ?? 0) > 0;
    const tools = manifest.tools.map((spec): Tool => {
      const toolName = extensionToolName(name, spec.name);
      if (this.o.registry.get(toolName)) throw new Error(`the tool name ${toolName} is taken`);
      return {
        name: toolName,
        description: spec.description,
        parameters: jsonSchema(spec.parameters as Record<string, unknown>),
        execute: (args, ctx) => this.#run(ext, spec.name, args, ctx),
        ...(networked ? { untrusted: true, egress: () => `extension:${name}` } : {}),
      };
    });
    for (const tool of tools) {
      this.o.registry.register(tool);
      this.#owners.set(tool.name, name);
    }
    this.#loaded.set(name, ext);
  }

  async #run(ext: Loaded, tool: string, args: unknown, ctx: { userId: string; signal: AbortSignal }): Promise<string> {
    const runtime = ext.manifest.runtime;
    if (runtime.type === "mcp") {
      if (!ext.mcp) {
        if (ext.credentials.type === "api_key") throw new Error(this.#missingKey(ext));
        throw new Error(`the MCP server of the extension ${ext.name} is not running`);
      }
      return ext.mcp.call(tool, args as Record<string, unknown>, ctx.signal);
    }
    const wasm = ext.wasm!;
    return runWasmTool({
      module: wasm.path,
      tool,
      args,
      minPages: wasm.minPages,
      maxPages: wasm.maxPages,
      timeoutMs: runtime.limits?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      cpuMs: runtime.limits?.cpuMs ?? DEFAULT_CPU_MS,
      network: { allow: runtime.network?.allow ?? [], access: this.o.access, credential: await this.#credential(ext, ctx.userId) },
      signal: ctx.signal,
      // the module's own lines (host.log)
      log: (m) => this.o.log.info(`extension ${ext.name}: ${this.secrets.redactor?.redact(m) ?? m}`, { extension: ext.name }),
    });
  }

  /**
   * The credential the host adds to a module's requests to the hosts the manifest binds it
   * to (none bound: it goes nowhere); the module never sees it.
   */
  async #credential(ext: Loaded, userId: string): Promise<BoundCredential | undefined> {
    const c = ext.credentials;
    if (c.type === "api_key") {
      const key = await this.credentials.apiKey(ext.name);
      if (!key) throw new Error(this.#missingKey(ext));
      if (c.query) return { hosts: c.hosts ?? [], query: { name: c.query, value: key }, secret: key };
      const header = c.header ?? "Authorization";
      const prefix = c.prefix ?? (header.toLowerCase() === "authorization" ? "Bearer " : "");
      return { hosts: c.hosts ?? [], header: { name: header, value: prefix + key }, secret: key };
    }
    if (c.type === "oauth2") {
      const tokens = await this.credentials.tokens(ext.name, userId, c);
      if (!tokens) throw new Error(`the extension ${ext.name} is not connected; connect it in the web UI at ${this.o.connectUrl(ext.name)}`);
      return { hosts: c.hosts ?? [], header: { name: "Authorization", value: `Bearer ${tokens.access_token}` }, secret: tokens.access_token };
    }
    return undefined;
  }

  #missingKey(ext: Loaded): string {
    const what = ext.credentials.type === "api_key" ? ext.credentials.name : "API key";
    return `the extension ${ext.name} needs its ${what}; an admin sets it with \`service extension set-key ${ext.name}\` or in the web UI`;
  }

  async #startMcp(ext: Loaded): Promise<void> {
    const runtime = ext.manifest.runtime as McpRuntime;
    const env: Record<string, string> = { ...runtime.env };
    if (ext.credentials.type === "api_key") {
      const key = await this.credentials.apiKey(ext.name);
      if (!key) {
        this.o.log.warn(`extension ${ext.name}: its MCP server waits for the API key (\`service extension set-key ${ext.name}\`)`, { extension: ext.name });
        return;
      }
      env[ext.credentials.env!] = key;
    }
    const command = /[\\/]/.test(runtime.command) && !isAbsolute(runtime.command) ? resolve(ext.dir, runtime.command) : runtime.command;
    const declared = ext.manifest.tools.map((t) => t.name);
    const { McpConnection } = loadConnection();
    ext.mcp = new McpConnection(
      ext.name,
      { command, args: runtime.args ?? [], env, cwd: ext.dir, trusted: true, timeoutMs: runtime.timeoutMs },
      {
        tools: (listed) => {
          const offered = new Set(listed.map((t) => t.name));
          const missing = declared.filter((t) => !offered.has(t));
          if (missing.length) this.o.log.warn(`extension ${ext.name}: its MCP server does not offer ${missing.join(", ")}`, { extension: ext.name, missing });
          ext.mcp!.toolCount = declared.length - missing.length;
        },
        log: (m) => this.o.log.info(`extension ${m.replace(/^mcp /, "")}`, { extension: ext.name }),
        warn: (m) => this.o.log.warn(`extension ${m.replace(/^mcp /, "")}`, { extension: ext.name }),
      },
    );
    ext.mcp.start();
  }
}
