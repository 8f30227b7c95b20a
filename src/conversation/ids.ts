const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const hexOf = (b: Uint8Array) => {
  let s = "";
  for (const x of b) s += HEX[x];
  return s;
};

/**
 * A new id: a UUID version 7 (RFC 9562), whose first digits are the time it was made. Rows
 * keyed by them are appended at the end of each index instead of at a random place in it: a
 * turn's commit changes a few pages, not one per index at random (docs/performance.md).
 */
export const newUuid = () => Bun.randomUUIDv7();
export { isUuid, UUID_PATTERN } from "./uuid";
export const itemId = () => `item_${uuidHex(newUuid())}`;
export const callId = () => `call_${hexOf(crypto.getRandomValues(new Uint8Array(16)))}`;

const uuidHex = (uuid: string) => uuid.replaceAll("-", "");
const hexUuid = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

/** `resp_` + the response UUID's 32 hex digits + the thread UUID's 32 hex digits. */
export function responseId(responseUuid: string, threadUuid: string): string {
  return `resp_${uuidHex(responseUuid)}${uuidHex(threadUuid)}`;
}

const RESPONSE_ID = /^resp_[0-9a-f]{64}$/;

/** The thread UUID embedded in a response id, or undefined when the id is malformed. */
export function threadOfResponse(id: string): string | undefined {
  return RESPONSE_ID.test(id) ? hexUuid(id.slice(37)) : undefined;
}

/** A thread as the Conversations API names it: `conv_` + the thread UUID's 32 hex digits. */
export const conversationId = (threadUuid: string) => `conv_${uuidHex(threadUuid)}`;

const CONVERSATION_ID = /^conv_[0-9a-f]{32}$/;

/** The thread UUID a conversation id names, or undefined when the id is malformed. */
export function threadOfConversation(id: string): string | undefined {
  return CONVERSATION_ID.test(id) ? hexUuid(id.slice(5)) : undefined;
}
