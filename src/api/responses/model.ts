import type { Revision } from "./request";

/** The placeholder model that retrieval (revision B) and cancel replies report (contract). */
const PLACEHOLDER_MODEL = "reborn";

/**
 * The `model` a Responses reply reports, decided here only. A response being created echoes
 * the request's model (its run); one retrieved, stored or still running, reports `default`
 * under revision A and the placeholder under B; a cancel reply reports the placeholder.
 */
export function reportedModel(revision: Revision, reply: "retrieved" | "cancelled"): string {
  return reply === "retrieved" && revision === "A" ? "default" : PLACEHOLDER_MODEL;
}
