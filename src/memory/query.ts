/** Words too common to narrow a search; dropped from queries unless nothing else is left. */
const STOPWORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves`.split(/\s+/),
);

/** At most this many words of a query are searched. */
export const MAX_QUERY_TERMS = 16;
/** A relaxed level is tried only when it needs at most this many word combinations. */
const MAX_COMBINATIONS = 16;

/**
 * Turns free text into FTS5 phrases that cannot be syntax errors: every whitespace-separated
 * word becomes a quoted phrase (`"e-mail"` finds e-mail; quotes inside are doubled), so
 * operators, column filters, `*`, `^` and parentheses typed by a user are plain text.
 * Common words are dropped unless nothing else is left. Empty when there are no letters
 * or digits at all.
 */
export function queryPhrases(text: string): string[] {
  const seen = new Set<string>();
  const words: { word: string; stop: boolean }[] = [];
  // control characters split words too: a NUL would end the FTS5 string early
  for (const word of text.split(/[\s\u0000-\u001f\u007f]+/)) {
    const key = word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
    if (!key || seen.has(key)) continue;
    seen.add(key);
    words.push({ word, stop: STOPWORDS.has(key) });
  }
  const content = words.filter((w) => !w.stop);
  return (content.length ? content : words).slice(0, MAX_QUERY_TERMS).map((w) => `"${w.word.replaceAll('"', '""')}"`);
}

/** A match expression and how many of the query's words each of its matches has at least. */
export interface MatchLevel {
  match: string;
  words: number;
}

/**
 * The searches to try in turn, strictest first: every word; then (for short queries) every
 * combination of one word fewer, and so on; last any word. A search stops relaxing once it
 * has enough results, which keeps it precise and cheap: a chunk with all the words beats
 * one with a single rare word, and the wide "any word" search runs only when it must.
 */
export function matchLevels(phrases: string[]): MatchLevel[] {
  const n = phrases.length;
  if (!n) return [];
  const levels: MatchLevel[] = [{ match: phrases.join(" AND "), words: n }];
  for (let k = n - 1; k >= 2; k--) {
    const sets = combinations(phrases, k, MAX_COMBINATIONS + 1);
    if (sets.length > MAX_COMBINATIONS) break;
    levels.push({ match: sets.map((s) => `(${s.join(" AND ")})`).join(" OR "), words: k });
  }
  if (n > 1) levels.push({ match: phrases.join(" OR "), words: 1 });
  return levels;
}

/** The k-element subsets of `items`, in order; stops after `max`. */
function combinations<T>(items: T[], k: number, max: number): T[][] {
  const out: T[][] = [];
  const pick: T[] = [];
  const walk = (from: number) => {
    if (out.length >= max) return;
    if (pick.length === k) return void out.push([...pick]);
    for (let i = from; i <= items.length - (k - pick.length); i++) {
      pick.push(items[i]!);
      walk(i + 1);
      pick.pop();
    }
  };
  walk(0);
  return out;
}
