// The egress log's shapes (GET /api/egress), for the server and the web UI, which imports the
// types only.
import { Type, type Static } from "@sinclair/typebox";

/** One call that could carry data out of the box and ran, as GET /api/egress lists it. */
export const EgressRecord = Type.Object({
  id: Type.Integer(),
  tool: Type.String(),
  /** Where the data could go: a host, `mcp:<server>`, `extension:<name>`. */
  destination: Type.String(),
  thread_id: Type.String(),
  response_id: Type.String(),
  /**
   * Why it went: `untainted turn` (the turn had read nothing untrusted), `allow list`
   * (tools.egress.allow), `the user's own words`, `user` (approved), `user: always`.
   */
  approved_by: Type.String(),
  created_at: Type.String(),
});
export type EgressRecord = Static<typeof EgressRecord>;

export const EgressList = Type.Object({ egress: Type.Array(EgressRecord), has_more: Type.Boolean() });
export type EgressList = Static<typeof EgressList>;
