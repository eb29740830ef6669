/**
 * The load test's requests, planned before the first one is sent: a fixed set of distinct search
 * targets built from the catalog's real titles and author names (some filtered by branch or
 * availability, some asking for a second page), their popularity following Zipf, and the subject
 * whose token each request carries; optionally a crawler's share of requests, each a search asked
 * once in the run. Everything comes from one seeded generator, so the same seed and options
 * always yield the same list, and a longer list starts with the shorter one.
 */
import { SeededRandom } from '../origin/random.ts';
import { canonicalBooksTarget, type BooksQuery } from '../shared/request-target.ts';
import type { CatalogVocabulary } from './catalog-vocabulary.ts';
import { ZipfSampler } from './zipf.ts';

export interface WorkloadOptions {
  readonly seed: number;
  /** Distinct queries; their popularity ranks are 1..distinct. */
  readonly distinct: number;
  /** Zipf exponent s: rank k is asked with probability ∝ 1/k^s. */
  readonly zipfExponent: number;
  /** Share of distinct queries that ask for a second page (cursor from a real first page). */
  readonly pagingShare: number;
  /** Share of distinct queries that filter by `branch` and/or `available`. */
  readonly filterShare: number;
  /** How many token subjects the requests are spread over. */
  readonly subjects: number;
  /** Requests in the planned list; a run longer than this starts the list again. */
  readonly length: number;
  /**
   * Share of requests that a crawler sends (0 when absent): each asks a search no other request
   * asks (crawlTarget), the one-off traffic that pushes a plain LRU's popular entries out.
   */
  readonly crawlerShare?: number;
}

export type QueryKind = 'search' | 'filter' | 'paging';

export interface PlannedQuery {
  readonly kind: QueryKind;
  /** For `paging`, the first page, whose `next` link becomes the query (see resolvePaging). */
  readonly target: string;
}

export interface Workload {
  /** Indexed by popularity rank − 1: queries[0] is the most asked. */
  readonly queries: readonly PlannedQuery[];
  /** For each request in order, the index of its query, or CRAWL. */
  readonly order: Uint32Array;
  /** For each request in order, the index of its subject. */
  readonly subjectOf: Uint16Array;
}

export const MAX_SUBJECTS = 65_535;
/** The `order` entry of a crawler's request. */
export const CRAWL = 0xffff_ffff;
const LIMIT_VARIANTS = [5, 10, 50] as const;
/** Second pages are asked of first pages this long, so most broad searches have one. */
const PAGING_LIMIT = 10;

function searchText(vocabulary: CatalogVocabulary, random: SeededRandom): string {
  let text: string;
  if (random.chance(0.6)) {
    const words = random
      .pick(vocabulary.titles)
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
      .split(' ');
    const length = 1 + random.below(Math.min(3, words.length));
    const start = random.below(words.length - length + 1);
    text = words.slice(start, start + length).join(' ');
  } else {
    const name = random
      .pick(vocabulary.authors)
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
    text = random.chance(0.5) ? name : (name.split(' ').at(-1) ?? name);
  }
  // Most people type in lower case; the rest type it as printed.
  return random.chance(0.7) ? text.toLowerCase() : text;
}

function kindOf(roll: number, options: WorkloadOptions): QueryKind {
  if (roll < options.pagingShare) return 'paging';
  return roll < options.pagingShare + options.filterShare ? 'filter' : 'search';
}

function planTarget(kind: QueryKind, vocabulary: CatalogVocabulary, random: SeededRandom): string | undefined {
  const q = searchText(vocabulary, random);
  if (q === '') return undefined;
  switch (kind) {
    case 'paging':
      return canonicalBooksTarget({ q, limit: PAGING_LIMIT });
    case 'filter': {
      const which = random.next();
      const query: BooksQuery =
        which < 0.5
          ? { q, limit: 20, branch: random.pick(vocabulary.branches) }
          : which < 0.75
            ? { q, limit: 20, available: true }
            : { q, limit: 20, branch: random.pick(vocabulary.branches), available: true };
      return canonicalBooksTarget(query);
    }
    case 'search':
      return canonicalBooksTarget({ q, limit: random.chance(0.2) ? random.pick(LIMIT_VARIANTS) : 20 });
  }
}

/** Tries per query to find a target not planned yet, before the catalog is deemed too small. */
const ATTEMPTS_PER_QUERY = 200;

export function buildWorkload(vocabulary: CatalogVocabulary, options: WorkloadOptions): Workload {
  const random = new SeededRandom(options.seed);
  const queries: PlannedQuery[] = [];
  const seen = new Set<string>();
  // The kind is drawn first and kept while a fresh text is sought, so that popular short texts
  // colliding more often cannot shift the shares of paging and filter queries.
  while (queries.length < options.distinct) {
    const kind = kindOf(random.next(), options);
    let planned: PlannedQuery | undefined;
    for (let i = 0; i < ATTEMPTS_PER_QUERY && planned === undefined; i++) {
      const target = planTarget(kind, vocabulary, random);
      if (target !== undefined && !seen.has(`${kind} ${target}`)) planned = { kind, target };
    }
    if (planned === undefined) {
      throw new RangeError(`the catalog yields only ${queries.length} distinct queries; ask for fewer with --distinct`);
    }
    seen.add(`${planned.kind} ${planned.target}`);
    queries.push(planned);
  }
  const zipf = new ZipfSampler(options.distinct, options.zipfExponent, random);
  const order = new Uint32Array(options.length);
  const subjectOf = new Uint16Array(options.length);
  const crawlerShare = options.crawlerShare ?? 0;
  for (let i = 0; i < options.length; i++) {
    // Drawn only with a crawler, so that a plan without one is what it always was.
    order[i] = crawlerShare > 0 && random.chance(crawlerShare) ? CRAWL : zipf.next();
    subjectOf[i] = random.below(options.subjects);
  }
  return { queries, order, subjectOf };
}

/** The largest `limit`, so that a crawler's searches are told apart by limit too. */
const MAX_LIMIT = 100;

/** Every distinct word of the catalog's titles, lower case, in a fixed order: what a crawler walks through. */
export function crawlWords(vocabulary: CatalogVocabulary): readonly string[] {
  const words = new Set<string>();
  for (const title of vocabulary.titles) for (const word of title.toLowerCase().split(/[^\p{L}\p{N}]+/u)) if (word !== '') words.add(word);
  return [...words].sort();
}

/**
 * The crawler's `n`th request: each title word with each `limit` from 100 down, so that no two
 * of its first `words × 100` requests ask the same thing (and the popular searches, which mostly
 * ask for 20, rarely meet one).
 */
export function crawlTarget(words: readonly string[], n: number): string {
  const q = words[n % words.length] ?? 'a';
  return canonicalBooksTarget({ q, limit: MAX_LIMIT - (Math.floor(n / words.length) % MAX_LIMIT) });
}

/**
 * Turns each paging query into the second page its first page links to. A first page without a
 * `next` (the search has one page only) stays as it is: the request is still real, only not paged.
 */
export async function resolvePaging(workload: Workload, nextOf: (target: string) => Promise<string | null>, concurrency = 16): Promise<readonly string[]> {
  const targets = workload.queries.map((q) => q.target);
  const paging = workload.queries.flatMap((q, i) => (q.kind === 'paging' ? [i] : []));
  let cursor = 0;
  const worker = async (): Promise<void> => {
    for (let i = paging[cursor++]; i !== undefined; i = paging[cursor++]) {
      const first = targets[i] ?? '';
      targets[i] = (await nextOf(first)) ?? first;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, paging.length) }, worker));
  return targets;
}
