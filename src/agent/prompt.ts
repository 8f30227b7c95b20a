/** A named document that shapes the agent (AGENTS.md, SOUL.md, USER.md, IDENTITY.md). */
export interface IdentityDocument {
  path: string;
  content: string;
}

/** Where identity documents come from; workspace memory provides them. */
export type IdentitySource = (userId: string) => Promise<IdentityDocument[]>;

export const noIdentity: IdentitySource = async () => [];

const BASE = `You are a helpful assistant running inside a self-hosted agent service.
Answer clearly and concisely. Use the tools you are given when they help; never invent tool results.`;

export function systemPrompt(identity: IdentityDocument[], now = new Date()): string {
  const parts = [BASE, `Today is ${now.toISOString().slice(0, 10)}.`];
  for (const doc of identity) parts.push(`# ${doc.path}\n\n${doc.content.trim()}`);
  return parts.join("\n\n");
}
