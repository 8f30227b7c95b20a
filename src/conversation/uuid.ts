/** A thread or user id as the service writes them: a lower-case UUID (as a schema's `pattern`). Shared with the browser. */
export const UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
const UUID = new RegExp(UUID_PATTERN);
export const isUuid = (s: string) => UUID.test(s);
