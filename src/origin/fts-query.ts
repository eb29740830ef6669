/**
 * Turns the user's search text into a search plan. User text is never FTS5 syntax: words are
 * extracted (letters, digits and combining marks) and each one is quoted as its own FTS5 string,
 * so quotes, `*`, `-`, `^`, `:`, parentheses, `NEAR`, `AND`, `OR` and `NOT` are either dropped as
 * separators or searched as plain words (https://sqlite.org/fts5.html#full_text_query_syntax).
 * The words are combined with FTS5's implicit AND.
 *
 * Common words (articles, prepositions, and single letters: initials, the "s" of "Priya's") are
 * left out when the text has other words, as library catalogs do: "the river" searches "river".
 * Without that, each such word drags a large share of the catalog through bm25. Text made only of
 * common words is searched as typed.
 */

export type SearchPlan =
  /** One ASCII word: answered from the precomputed term index (catalog-db.ts). */
  | { readonly kind: 'term'; readonly term: string }
  /** Anything else: an FTS5 MATCH expression of quoted words. */
  | { readonly kind: 'match'; readonly match: string };

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Words the FTS5 unicode61 tokenizer turns into exactly their lower-case spelling. */
const PLAIN_TOKEN = /^[a-z0-9]+$/;
const COMMON_WORDS: ReadonlySet<string> = new Set(['a', 'an', 'and', 'at', 'by', 'for', 'from', 'in', 'into', 'of', 'on', 'or', 'the', 'to', 'with']);

/** `undefined` when the text holds no searchable word (only punctuation, symbols or emoji). */
export function planSearch(text: string): SearchPlan | undefined {
  const words = [...new Set(Array.from(text.matchAll(WORD), (m) => m[0].toLowerCase()))];
  if (words.length === 0) return undefined;
  const content = words.filter((w) => w.length > 1 && !COMMON_WORDS.has(w));
  const searched = content.length > 0 ? content : words;
  const [only] = searched;
  if (searched.length === 1 && only !== undefined && PLAIN_TOKEN.test(only)) return { kind: 'term', term: only };
  // A word holds no `"`, so wrapping it in quotes yields one FTS5 string token.
  return { kind: 'match', match: searched.map((w) => `"${w}"`).join(' ') };
}

/** A stable spelling of the plan, for binding cursors to the search they came from. */
export function planKey(plan: SearchPlan): string {
  return plan.kind === 'term' ? `term:${plan.term}` : `match:${plan.match}`;
}
