import type { Config } from "../../config/schema";
import type { Paths } from "../../config/load";
import type { Db } from "../../store/db";
import type { Llm } from "../../llm/types";
import type { Tool } from "../tool";

export interface BuiltinDeps {
  config: Config;
  paths: Paths;
  db: Db;
  llm: Llm;
}

/** Every built-in tool, registered at start-up; their names are registered actions. */
export function builtinTools(_deps: BuiltinDeps): Tool[] {
  return [];
}
