/**
 * Generates believable books: titles from a dozen title shapes, authors from first names and
 * surnames (some with a middle initial, some books with two authors), and holdings spread the way
 * a library system's are: the central library holds most titles, the mobile library few, and
 * popular books are more often out on loan.
 */
import { SeededRandom } from './random.ts';
import { ADJECTIVES, BRANCHES, FIRST_NAMES, NOUNS, PLACES, SURNAMES } from './seed-words.ts';

export interface GeneratedBook {
  readonly title: string;
  readonly authors: readonly string[];
  readonly holdings: readonly { readonly branch: string; readonly available: boolean }[];
}

type Shape = (r: SeededRandom) => string;

const adjective = (r: SeededRandom): string => r.pick(ADJECTIVES);
const noun = (r: SeededRandom): string => r.pick(NOUNS);
const IRREGULAR: Readonly<Record<string, string>> = { Thief: 'Thieves', Knife: 'Knives', Wolf: 'Wolves', Child: 'Children', Ashes: 'Ashes' };

function plural(word: string): string {
  const irregular = IRREGULAR[word];
  if (irregular !== undefined) return irregular;
  if (/(s|sh|ch|x)$/.test(word)) return `${word}es`;
  return /[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}s`;
}

const SHAPES: readonly Shape[] = [
  (r) => `The ${adjective(r)} ${noun(r)}`,
  (r) => `The ${noun(r)} of ${r.pick(PLACES)}`,
  (r) => `${adjective(r)} ${plural(noun(r))}`,
  (r) => `The ${noun(r)} and the ${noun(r)}`,
  (r) => `A ${noun(r)} for ${r.pick(FIRST_NAMES)}`,
  (r) => `${r.pick(FIRST_NAMES)}'s ${noun(r)}`,
  (r) => `The Last ${noun(r)} of ${r.pick(PLACES)}`,
  (r) => `Beneath the ${adjective(r)} ${noun(r)}`,
  (r) => `Letters from ${r.pick(PLACES)}`,
  (r) => `${plural(noun(r))} of ${adjective(r)} ${plural(noun(r))}`,
  (r) => `The ${noun(r)}`,
  (r) => `A ${adjective(r)} ${noun(r)} in ${r.pick(PLACES)}`,
  noun,
  (r) => `The ${noun(r)}'s ${noun(r)}`,
];

/** Relative share of the catalog each branch holds, in BRANCHES order. */
const BRANCH_WEIGHTS = [60, 25, 20, 18, 15, 15, 14, 22, 12, 12, 10, 3];

function author(r: SeededRandom): string {
  const middle = r.chance(0.2) ? ` ${String.fromCharCode(65 + r.below(26))}.` : '';
  return `${r.pick(FIRST_NAMES)}${middle} ${r.pick(SURNAMES)}`;
}

function holdings(r: SeededRandom, popularity: number): GeneratedBook['holdings'] {
  const held: { branch: string; available: boolean }[] = [];
  BRANCHES.forEach(([branch], i) => {
    const weight = BRANCH_WEIGHTS[i] ?? 10;
    if (r.chance((weight / 100) * (0.6 + popularity))) held.push({ branch, available: r.chance(0.85 - 0.55 * popularity) });
  });
  if (held.length === 0) held.push({ branch: BRANCHES[0][0], available: r.chance(0.8) });
  return held;
}

/** The same seed yields the same sequence, so a small catalog is a prefix of a larger one. */
export function* generateBooks(count: number, seed = 20240601): Generator<GeneratedBook> {
  const r = new SeededRandom(seed);
  for (let i = 0; i < count; i++) {
    const title = r.pick(SHAPES)(r);
    const authors = r.chance(0.12) ? [author(r), author(r)] : [author(r)];
    const popularity = r.next() ** 3;
    yield { title, authors, holdings: holdings(r, popularity) };
  }
}
