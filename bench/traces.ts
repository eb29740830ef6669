/**
 * Request traces for the hit-ratio replay: each a list of key ids, with every distinct key's
 * string and the bytes its entry costs in the cache.
 *
 * Synthetic ones are built over a million distinct catalog searches (the memory bench's query
 * space, bench/query-space.ts), each given the size of one of a few thousand real answers of the
 * embedded catalog (answer-sizes.ts), drawn at random, so that sizes are real but independent of
 * popularity:
 * - Zipf popularity, α 0.7, 0.9 and 1.1;
 * - the same (α 0.9) with a crawler paging through every search mixed in: 30 % of requests, each
 *   for a search nobody else asks, in order (one-hit wonders, the scan that LRU loses most to);
 * - a popularity shift half-way: the second half draws its ranks from a shuffled order, so that
 *   yesterday's hot queries go cold and others get hot;
 * - recency-biased: 30 % of requests are searches nobody asked before, every other one asks again
 *   the search asked some requests earlier, how many drawn from a heavy tail (Pareto, α 1, median
 *   5,000 requests): what was asked lately is what is asked next, and counts say little (news, a
 *   session's own searches). The one where LRU does best.
 * - phases: every 200,000 requests the trace turns from Zipf α 0.9 to the recency-biased
 *   pattern and back, so that a policy must follow the change both ways;
 * - a loop: the searches paged through in order, over and over, 1.2 times the bound in bytes, so
 *   made afresh for each bound replayed: LRU never hits, and MIN keeps most of the loop.
 *
 * A trace file holds one request per line, `key [size]`: the size is the entry's bytes in the
 * cache, a fixed entry size when absent, so that a block trace replays with the bound set in
 * entries. Blank lines and lines starting with `#` are skipped. A file named `….gz` or `….zst` is
 * read through gunzip or zstd, as public traces are shipped.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { ZipfSampler } from '../src/loadtest/zipf.ts';
import { SeededRandom } from '../src/origin/random.ts';
import { entryBytes } from '../src/gateway/store/entry-size.ts';
import { realAnswerBytes } from './answer-sizes.ts';
import { QuerySpace } from './query-space.ts';

export interface Trace {
  readonly name: string;
  readonly description: string;
  /** Each distinct key, by id. */
  readonly keys: readonly string[];
  /** What each key's entry costs in the cache, by id: what the bound counts. */
  readonly sizes: Uint32Array;
  /** The key id of each request, in order. */
  readonly requests: Uint32Array;
}

/** A trace made for each bound it is replayed at (the loop), or one for all. */
export type TraceFamily = Trace | { readonly name: string; readonly forBound: (boundBytes: number) => Trace };

/** The trace of `family` replayed at `boundBytes`. */
export function traceAt(family: TraceFamily, boundBytes: number): Trace {
  return 'forBound' in family ? family.forBound(boundBytes) : family;
}

export interface SyntheticOptions {
  readonly dataDir: string;
  /** Requests per trace. */
  readonly requests: number;
  /** Distinct queries the Zipf popularity ranges over. */
  readonly distinct: number;
}

/** The names syntheticTraces gives its traces, in its order. */
export const SYNTHETIC_TRACE_NAMES = ['zipf-0.7', 'zipf-0.9', 'zipf-1.1', 'crawler-30%', 'shift', 'recency', 'phases', 'loop'] as const;

/** Real answers sampled for their sizes. */
const ANSWER_SAMPLE = 3000;
const CRAWLER_SHARE = 0.3;
/** The recency-biased trace's share of searches asked for the first time (its keys are the crawler's). */
const RECENCY_NEW_SHARE = 0.3;
/** Its median distance, in requests, from a search to the one it asks again. */
const RECENCY_SCALE = 5000;
/** Requests per phase of the phases trace. */
const PHASE_REQUESTS = 200_000;
/** The loop's bytes, per byte of the bound. */
const LOOP_SHARE = 1.2;
const SEED = 27;
/** The smallest size a key's entry can have: its fixed part and its key, with no response bytes. */
export function leastEntryBytes(key: string): number {
  return entryBytes(key, 0);
}

/** Builds every synthetic trace; each shares the keys, and their sizes, of the million searches. */
export function syntheticTraces(options: SyntheticOptions, log: (m: string) => void): TraceFamily[] {
  const crawled = Math.ceil(options.requests * CRAWLER_SHARE);
  log(`sizing ${ANSWER_SAMPLE} real answers of the catalog…`);
  const answers = realAnswerBytes(options.dataDir, ANSWER_SAMPLE);
  const space = new QuerySpace(readCatalogVocabulary(join(options.dataDir, 'catalog.db')));
  const random = new SeededRandom(SEED);
  const keys: string[] = [];
  const sizes = new Uint32Array(options.distinct + crawled);
  for (let id = 0; id < sizes.length; id++) {
    const key = space.at(id);
    keys.push(key);
    sizes[id] = entryBytes(key, answers[random.below(answers.length)] ?? 0);
  }
  const zipfKeys = keys.slice(0, options.distinct);
  const zipfSizes = sizes.subarray(0, options.distinct);
  const zipf = (alpha: number): Trace => {
    const sampler = new ZipfSampler(options.distinct, alpha, random);
    const requests = new Uint32Array(options.requests);
    for (let i = 0; i < requests.length; i++) requests[i] = sampler.next();
    return {
      name: `zipf-${alpha}`,
      description: `Zipf α ${alpha} over ${options.distinct.toLocaleString('en-US')} searches`,
      keys: zipfKeys,
      sizes: zipfSizes,
      requests,
    };
  };
  log('drawing the synthetic traces…');
  const traces: TraceFamily[] = [zipf(0.7), zipf(0.9), zipf(1.1)];

  const mixed = new Uint32Array(options.requests);
  const sampler = new ZipfSampler(options.distinct, 0.9, random);
  let crawler = options.distinct;
  for (let i = 0; i < mixed.length; i++) mixed[i] = random.next() < CRAWLER_SHARE && crawler < sizes.length ? crawler++ : sampler.next();
  traces.push({
    name: 'crawler-30%',
    description: `Zipf α 0.9, 30 % of requests a crawler paging through searches asked once each`,
    keys,
    sizes,
    requests: mixed,
  });

  const shifted = new Uint32Array(options.requests);
  const order = Uint32Array.from({ length: options.distinct }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = random.below(i + 1);
    const swap = order[i] ?? i;
    order[i] = order[j] ?? j;
    order[j] = swap;
  }
  for (let i = 0; i < shifted.length; i++) {
    const rank = sampler.next();
    shifted[i] = i < shifted.length / 2 ? rank : (order[rank] ?? rank);
  }
  traces.push({ name: 'shift', description: 'Zipf α 0.9, popularity reshuffled half-way', keys: zipfKeys, sizes: zipfSizes, requests: shifted });

  let fresh = options.distinct;
  /** A search nobody asked before; when the crawler's are used up, a Zipf one at random. */
  const newSearch = (): number => (fresh < sizes.length ? fresh++ : random.below(options.distinct));
  /** The recency-biased pattern's next request, after the requests of `history` (its own, in order) up to `at`. */
  const recencyNext = (history: Uint32Array, at: number): number => {
    const isNew = random.next() < RECENCY_NEW_SHARE;
    const distance = Math.floor(RECENCY_SCALE * (1 / (1 - random.next()) - 1)) + 1;
    const again = distance <= at && !isNew ? history[at - distance] : undefined;
    return again ?? newSearch();
  };
  const recent = new Uint32Array(options.requests);
  for (let i = 0; i < recent.length; i++) recent[i] = recencyNext(recent, i);
  traces.push({
    name: 'recency',
    description: `${RECENCY_NEW_SHARE * 100} % new searches, the rest asking again a search asked a Pareto-distributed number of requests earlier (median ${RECENCY_SCALE.toLocaleString('en-US')})`,
    keys,
    sizes,
    requests: recent,
  });

  fresh = options.distinct;
  const phased = new Uint32Array(options.requests);
  const recencyPhases = new Uint32Array(options.requests);
  let recencyAt = 0;
  for (let i = 0; i < phased.length; i++) {
    if (Math.floor(i / PHASE_REQUESTS) % 2 === 0) {
      phased[i] = sampler.next();
    } else {
      const key = recencyNext(recencyPhases, recencyAt);
      recencyPhases[recencyAt++] = key;
      phased[i] = key;
    }
  }
  traces.push({
    name: 'phases',
    description: `Zipf α 0.9 and the recency trace's pattern in turn, ${PHASE_REQUESTS.toLocaleString('en-US')} requests each`,
    keys,
    sizes,
    requests: phased,
  });

  traces.push({
    name: 'loop',
    forBound: (boundBytes) => {
      let end = options.distinct;
      for (let bytes = 0; bytes < LOOP_SHARE * boundBytes && end < sizes.length; end++) bytes += sizes[end] ?? 0;
      const length = end - options.distinct;
      const requests = Uint32Array.from({ length: options.requests }, (_, i) => options.distinct + (i % length));
      return {
        name: 'loop',
        description: `${length.toLocaleString('en-US')} searches in a loop, ${LOOP_SHARE} times the bound of ${(boundBytes / 2 ** 20).toFixed(0)} MiB`,
        keys,
        sizes,
        requests,
      };
    },
  });
  return traces;
}

/**
 * Key ids of a trace file's keys. A V8 Map holds at most 2^24 keys (16,777,216), fewer than a
 * long block trace has, so a full one is followed by another, each asked in turn.
 */
export class KeyIds {
  readonly keys: string[] = [];
  /** The Map new keys go into, last of `#maps`. */
  #current = new Map<string, number>();
  readonly #maps = [this.#current];
  readonly #mapKeys: number;

  /** `mapKeys`: the keys one Map takes before the next is begun (tests make it small). */
  constructor(mapKeys = 2 ** 24 - 1) {
    this.#mapKeys = mapKeys;
  }

  /** `key`'s id; a new key takes the next one. */
  id(key: string): number {
    for (const map of this.#maps) {
      const id = map.get(key);
      if (id !== undefined) return id;
    }
    if (this.#current.size >= this.#mapKeys) {
      this.#current = new Map<string, number>();
      this.#maps.push(this.#current);
    }
    const id = this.keys.length;
    this.#current.set(key, id);
    this.keys.push(key);
    return id;
  }
}

/** A Uint32Array that doubles as it fills: a JavaScript array of numbers stops at 2^27 elements, and costs twice the bytes. */
class GrowingUint32 {
  #items = new Uint32Array(1 << 16);
  length = 0;

  set(index: number, value: number): void {
    while (index >= this.#items.length) {
      const larger = new Uint32Array(this.#items.length * 2);
      larger.set(this.#items);
      this.#items = larger;
    }
    this.#items[index] = value;
    if (index >= this.length) this.length = index + 1;
  }

  /** An exact-size copy. */
  done(): Uint32Array {
    return this.#items.slice(0, this.length);
  }
}

/**
 * A trace file's bytes, decompressed when its name says it is compressed. A failure of either
 * stream destroys the one read with it, so the reader sees it.
 */
function traceBytes(path: string): Readable {
  const file = createReadStream(path);
  const decompress = path.endsWith('.gz') ? createGunzip() : path.endsWith('.zst') ? createZstdDecompress() : undefined;
  return decompress === undefined ? file : pipeline(file, decompress, () => undefined);
}

/**
 * Reads a `key [size]` trace; `fixedEntryBytes` is the size of a request that gives none. Requests
 * and sizes go to typed arrays and keys to as many Maps as they need, so that a public trace of
 * hundreds of millions of requests and tens of millions of keys reads in the default heap.
 */
export async function readTrace(path: string, fixedEntryBytes: number): Promise<Trace> {
  const ids = new KeyIds();
  const sizes = new GrowingUint32();
  const requests = new GrowingUint32();
  let line = 0;
  for await (const text of createInterface({ input: traceBytes(path), crlfDelay: Infinity })) {
    line++;
    const fields = text.trim().split(/\s+/);
    const [key, sizeText] = fields;
    if (key === undefined || key === '' || key.startsWith('#')) continue;
    if (fields.length > 2 || (sizeText !== undefined && !/^[0-9]+$/.test(sizeText))) throw new Error(`${path}:${line}: expected "key [size]", got "${text}"`);
    const id = ids.id(key);
    // A key whose size changes takes its latest size, as a re-stored entry does.
    sizes.set(id, Math.max(leastEntryBytes(key), sizeText === undefined ? fixedEntryBytes : Number(sizeText)));
    requests.set(requests.length, id);
  }
  if (requests.length === 0) throw new Error(`${path}: no requests`);
  return {
    name: path.split('/').at(-1) ?? path,
    description: `${path}, ${ids.keys.length.toLocaleString('en-US')} distinct keys`,
    keys: ids.keys,
    sizes: sizes.done(),
    requests: requests.done(),
  };
}
