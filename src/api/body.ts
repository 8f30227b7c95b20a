import { InvalidRequest, PayloadTooLarge } from "../errors";

export const MAX_BODY_BYTES = 14 * 1024 * 1024;

/**
 * Reads a JSON object body whatever its content type (curl -d sends form encoding), with
 * the gateway's 14 MiB limit.
 */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new PayloadTooLarge("14 MiB");
  let text: string;
  try {
    const bytes = await request.arrayBuffer();
    if (bytes.byteLength > MAX_BODY_BYTES) throw new PayloadTooLarge("14 MiB");
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    if (e instanceof PayloadTooLarge) throw e;
    throw new InvalidRequest("The request body could not be read as UTF-8 text.");
  }
  if (!text.trim()) throw new InvalidRequest("The request body is empty; send a JSON object.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InvalidRequest(`The request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidRequest("The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}
