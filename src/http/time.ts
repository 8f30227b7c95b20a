/** Times on the wire are ISO 8601 in UTC; the store keeps Unix seconds (threads, gates) or milliseconds (memory). */
export const isoFromSeconds = (seconds: number) => new Date(seconds * 1000).toISOString();
export const isoFromMs = (ms: number) => new Date(ms).toISOString();
