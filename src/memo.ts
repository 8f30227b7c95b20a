/**
 * `fn`, remembered by the text it is given: for a text that comes back step after step (a
 * user's system prompt is the same until an identity file changes), where `fn` costs more
 * than finding the text in a map, which reads it once. Up to `kept` texts; past that all are
 * forgotten at once.
 */
export function memoByText<T>(fn: (text: string) => T, kept = 64): (text: string) => T {
  const seen = new Map<string, T>();
  return (text) => {
    let out = seen.get(text);
    if (out === undefined) {
      if (seen.size >= kept) seen.clear();
      seen.set(text, (out = fn(text)));
    }
    return out;
  };
}

/**
 * `fn`, remembered by the object it is given, for as long as that object lives: for values
 * made once and handed over again and again (a tool's spec, the list offered to a user, the
 * SDK's headers of a request), which must not change once seen.
 */
export function memoByObject<K extends object, T>(fn: (key: K) => T): (key: K) => T {
  const seen = new WeakMap<K, T>();
  return (key) => {
    let out = seen.get(key);
    if (out === undefined) seen.set(key, (out = fn(key)));
    return out;
  };
}
