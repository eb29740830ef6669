/**
 * An endless supply of distinct, realistic search targets for the bench: two-word fragments of
 * the catalog's real titles and its authors' names, each combined with a series of variants
 * (page sizes, branch and availability filters). Target n is a pure function of n, so a run
 * that takes targets from a counter never repeats one — a cold miss stays a miss — and two runs
 * take the same ones.
 */
import { SeededRandom } from '../src/origin/random.ts';
import type { CatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { canonicalBooksTarget, type BooksQuery } from '../src/shared/request-target.ts';

type Variant = Omit<BooksQuery, 'q'>;

function shuffled<T>(items: T[], random: SeededRandom): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.below(i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

export class QuerySpace {
  readonly #texts: readonly string[];
  readonly #variants: readonly Variant[];
  #taken = 0;

  constructor(vocabulary: CatalogVocabulary, seed = 1) {
    const texts = new Set<string>();
    for (const title of vocabulary.titles) {
      const words = title
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim()
        .split(' ');
      for (let i = 0; i + 1 < words.length; i++) {
        const pair = [words[i] ?? '', words[i + 1] ?? ''];
        if (pair.every((w) => w.length > 1)) texts.add(pair.join(' '));
      }
    }
    for (const author of vocabulary.authors)
      texts.add(
        author
          .toLowerCase()
          .replace(/[^\p{L}\p{N}]+/gu, ' ')
          .trim(),
      );
    this.#texts = shuffled(
      [...texts].filter((t) => t !== ''),
      new SeededRandom(seed),
    );
    const variants: Variant[] = [];
    for (const limit of [20, 10, 50]) {
      variants.push({ limit });
      variants.push({ limit, available: true });
      for (const branch of vocabulary.branches) variants.push({ limit, branch }, { limit, branch, available: true });
    }
    this.#variants = variants;
  }

  /** How many distinct targets there are. */
  get size(): number {
    return this.#texts.length * this.#variants.length;
  }

  /** The n-th target: every text with the first variant, then every text with the second, … */
  at(n: number): string {
    if (n >= this.size) throw new RangeError(`the query space holds ${this.size} distinct targets, not ${n + 1}`);
    const q = this.#texts[n % this.#texts.length] ?? '';
    const variant = this.#variants[Math.floor(n / this.#texts.length)] ?? { limit: 20 };
    return canonicalBooksTarget({ ...variant, q });
  }

  /** The next target never handed out by this space before. */
  take(): string {
    return this.at(this.#taken++);
  }
}
