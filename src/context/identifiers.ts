/**
 * Identifier-like strings in text: URLs, e-mail addresses, paths, and tokens that mix
 * digits with letters or separators (ticket ids, versions, hashes, dates, addresses).
 * Summaries must carry these verbatim; the ones a summary left out are listed after it.
 */
const PATTERNS = [
  /\bhttps?:\/\/[^\s<>"'`)\]]+[^\s<>"'`)\].,;:!?]/g,
  /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
  /(?:~|\.{1,2})?\/?(?:[\w.-]+\/)+[\w.-]*\w/g,
  /\b(?=[\w.:#-]*\d)(?=[\w.:#-]*[A-Za-z_])[A-Za-z0-9][\w.:#-]*[A-Za-z0-9]\b/g,
  /\b\d[\d,.:/-]{2,}\d\b/g,
];

const MAX_LENGTH = 200;

/** The identifiers of `text`, each once, in the order of their last appearance. */
export function identifiers(text: string): string[] {
  const found: { id: string; at: number }[] = [];
  for (const p of PATTERNS) {
    for (const m of text.matchAll(p)) {
      const id = m[0];
      if (id.length < 4 || id.length > MAX_LENGTH) continue;
      found.push({ id, at: m.index! });
    }
  }
  const last = new Map<string, number>();
  for (const f of found) last.set(f.id, Math.max(last.get(f.id) ?? -1, f.at));
  // a shorter match inside a longer one (a path inside a URL) is carried by the longer one
  const ids = [...last.keys()];
  const kept = ids.filter((id) => !ids.some((other) => other !== id && other.length > id.length && other.includes(id)));
  return kept.sort((a, b) => last.get(a)! - last.get(b)!);
}
