/** The "did you mean" of a refused name: the closest known one, when it is close enough to be a typo. */

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(substitution, (previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The words of a name: `CATALOG_GATEWAY_PORT` and `gateway.cache.maxBytes` alike. */
const words = (name: string): string[] => name.toLowerCase().split(/[._]/);

/** Whether `candidate` is `typed` with one word more (`CATALOG_PORT` in `CATALOG_ORIGIN_PORT`). */
function lacksOneWord(typed: readonly string[], candidate: readonly string[]): boolean {
  return candidate.length === typed.length + 1 && candidate.some((_, i) => candidate.toSpliced(i, 1).join('.') === typed.join('.'));
}

/**
 * ` (did you mean X?)`, or '' when nothing is near. A swapped pair of letters costs 2 and a word
 * dropped from a long name costs more, so the bound grows with the name's length. A short name
 * that is a longer one without a word (`CATALOG_PORT`, which server's?) is close to each name it
 * could shorten, and all of them are offered before any mere typo.
 */
export function didYouMean(name: string, known: Iterable<string>): string {
  const typed = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  const widened: string[] = [];
  for (const candidate of known) {
    const d = distance(typed, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
    if (lacksOneWord(words(name), words(candidate))) widened.push(candidate);
  }
  if (widened.length > 0)
    return ` (did you mean ${widened.length === 1 ? (widened[0] ?? '') : `${widened.slice(0, -1).join(', ')} or ${widened.at(-1) ?? ''}`}?)`;
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean ${best}?)` : '';
}
