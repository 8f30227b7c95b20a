import type { Config } from "../../config/schema";
import type { Paths } from "../../config/load";
import type { Db } from "../../store/db";
import type { Llm } from "../../llm/types";
import type { Tool } from "../tool";
import type { MemoryService } from "../../memory/service";
import { memoryTools } from "./memory";
import { fileTools } from "./files";
import { agentFileRecords } from "../../store/agent-files";
import { webFetchTool } from "./web-fetch";
import { webSearchTool } from "./web-search";
import { toolSearchTool } from "./tool-search";
import { missionTools } from "./missions";
import type { Routines } from "../../routines/service";

export interface BuiltinDeps {
  config: Config;
  paths: Paths;
  db: Db;
  llm: Llm;
  memory: MemoryService;
  /** The user's routines, for the mission tools. */
  routines: Routines;
}

/** Every built-in tool, registered at start-up; their names are registered actions. */
export function builtinTools(deps: BuiltinDeps): Tool[] {
  const { web } = deps.config.tools;
  return [
    ...fileTools(deps.paths, deps.db && agentFileRecords(deps.db)),
    webFetchTool(web),
    ...memoryTools(deps.memory),
    ...missionTools(deps.routines),
    // web_search exists only with a SearXNG instance to ask
    ...(web.searchUrl ? [webSearchTool(web.searchUrl)] : []),
    // offered only when the tools are too many for the context window (agent/offer.ts)
    toolSearchTool,
  ];
}

/** The built-in tools' names under this configuration (`service doctor`); nothing they use is opened. */
export function builtinToolNames(config: Config, paths: Paths): string[] {
  return builtinTools({ config, paths } as BuiltinDeps).map((t) => t.name);
}
