// The memory endpoints' replies (src/gateway/memory.ts), for the server and the web UI's memory
// screen, which imports the types only.
import { Type, type Static } from "@sinclair/typebox";

/** A document as the tree lists it, and as a write answers. */
export const MemoryDocument = Type.Object({ path: Type.String(), size: Type.Integer(), updated_at: Type.String() });
export type MemoryDocument = Static<typeof MemoryDocument>;

/** GET /api/memory?q=: one hit. */
export const MemoryHit = Type.Object({ path: Type.String(), snippet: Type.String(), score: Type.Number() });
export type MemoryHit = Static<typeof MemoryHit>;

/** GET /api/memory/read?path= */
export const MemoryFile = Type.Object({
  path: Type.String(),
  content: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** The agent wrote it after reading untrusted content: it reads it back as untrusted. */
  tainted: Type.Boolean(),
});
export type MemoryFile = Static<typeof MemoryFile>;

export const MemoryTree = Type.Object({ documents: Type.Array(MemoryDocument) });
export const MemoryHits = Type.Object({ results: Type.Array(MemoryHit) });
