import type { StoredError } from "../store/schema";

/**
 * Whether a failed turn's error is the LLM being away for a while (unreachable, timing out,
 * rate limited, a 5xx, a stream cut off) after the turn's own retries: worth running the work
 * again later. It reads the words of openai.ts and `describeFailure` (retry.ts), which its
 * tests hold; a request the provider refused (400, 401, 404) is not.
 */
export function transientFailure(error: Pick<StoredError, "code" | "message"> | null | undefined): boolean {
  if (error?.code !== "llm_error") return false;
  return /could not be reached|did not answer in time|answered HTTP (408|409|429|5\d\d)\b|stopped in the middle of its answer/.test(error.message);
}
