/**
 * The disk tier's two candidate engines on the gateway's workload (issue 57): `node:sqlite` as the
 * tier would use it (WAL, synchronous=NORMAL, one transaction per write batch, reads synchronous),
 * writing on the event loop (`sqlite`) or on a worker thread (`sqlite-worker`), and LMDB (`lmdb`),
 * with its writes queued to its write thread (`lmdb-async`) or committed on the caller's thread
 * (`lmdb-sync`). The layouts are in disk-engine-stores.ts; disk-engine-faults.ts probes faults.
 *
 *   node bench/disk-engines.ts [--entries N, default 200000] [--value-bytes B, default 2000] [--runs R, default 1]
 *                              [--engines sqlite,sqlite-worker,lmdb-async,lmdb-sync (the default);
 *                               also sqlite-mmap, sqlite-worker-folded] [--no-save]
 *
 * The default run takes about 3 minutes of CPU (most of it SQLite's and lmdb-sync's fills);
 * `--entries 50000` about a quarter of that.
 *
 * Each run, per engine, in a fresh temporary directory: fills N entries of ~2 KB JSON-like answers
 * (5 tags each) in batches of 64, one batch per turn of the event loop; reads random present keys
 * (64 per turn, and 1 per turn) and missing ones; lets a second process read while this one writes
 * another N/10; purges the hottest book tag and 100 random ones through the tag index; evicts the
 * least recently written 10 % in chunks of 1,000. Times are what the call held the event loop for,
 * except the fill's rate and the purge/evict totals, which wait for the commit too. Prints a
 * markdown table and writes the JSON to bench/results/disk-engines-<date>.json.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { saveResults } from './results-file.ts';
import { spread, type Spread } from './stats.ts';
import { ENGINE_NAMES, openEngine, type DiskEngine, type EngineName, type WriteEntry } from './disk-engine-stores.ts';

/** `sqlite-mmap` and `sqlite-worker-folded` only on request: each differs from its base in one respect, and a run of all six takes long. */
const DEFAULT_ENGINES: readonly EngineName[] = ['sqlite', 'sqlite-worker', 'lmdb-async', 'lmdb-sync'];
const BATCH = 64;
const EVICT_CHUNK = 1000;
const BOOKS = 20_000;
const FACETS = ['avail_any', 'avail_now', 'avail_soon', 'lang_en', 'lang_fr', 'lang_de', 'form_print', 'form_ebook'];
const TAGS_PER_ENTRY = 5;
const BOOK_TAGS = TAGS_PER_ENTRY - 1;

/** A small deterministic generator, so every engine and run stores the same bytes. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'to', 'sa', 'vel', 'dor', 'an', 'is', 'qu', 'er', 'bri', 'nox', 'tal', 'um', 'es', 'pho', 'lin', 'gar'];
const WORDS = Array.from({ length: 2000 }, (_, i) => {
  const random = mulberry32(i + 1);
  const length = 2 + Math.floor(random() * 3);
  return Array.from({ length }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)] ?? 'a').join('');
});

function word(random: () => number): string {
  return WORDS[Math.floor(random() * WORDS.length)] ?? 'a';
}

/** A skewed book id: low ids are the popular books, as loans and searches are not uniform. */
function bookId(random: () => number): number {
  return Math.floor(BOOKS * random() ** 1.5);
}

/** The search a key names, as the catalog route keys it. */
export function entryKey(index: number): string {
  const random = mulberry32(index * 7919 + 17);
  return `/v1/books?q=${word(random)}+${word(random)}&limit=20&offset=${index % 97}&n=${index}`;
}

/**
 * Entry `index`: a catalog answer of about `valueBytes` (`--value-bytes`; a full search page kept
 * gzip'd is ~2.5 KB, a short answer ~450 B) whose first books are its tags, and one facet tag.
 */
export function makeEntry(index: number, valueBytes: number, books?: Uint32Array): WriteEntry {
  const random = mulberry32(index + 1_000_003);
  const items: string[] = [];
  const tags: string[] = [];
  let length = 40;
  while (length < valueBytes) {
    const id = bookId(random);
    if (tags.length < BOOK_TAGS && !tags.includes(`bk_${id}`)) {
      if (books !== undefined) books[index * BOOK_TAGS + tags.length] = id;
      tags.push(`bk_${id}`);
    }
    const item = `{"id":"bk_${id}","title":"${word(random)} ${word(random)} ${word(random)}","authors":["${word(random)} ${word(random)}"],"year":${1900 + Math.floor(random() * 125)},"subjects":["${word(random)}","${word(random)}"],"available":${random() < 0.5},"copies":${Math.floor(random() * 6)}}`;
    items.push(item);
    length += item.length + 1;
  }
  tags.push(FACETS[index % FACETS.length] ?? 'avail_any');
  const value = Buffer.from(`{"total":${items.length * 13},"limit":20,"items":[${items.join(',')}]}`);
  return { key: entryKey(index), value, tags };
}

/**
 * CPU time of this thread (µs): on a machine shared with other work, what a call costs apart from
 * waiting for a core. Counted in scheduler ticks (4 ms here), so only sums over many calls mean anything.
 */
function threadCpuUs(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

/** CPU time of the whole process (µs), lmdb's write thread and SQLite's nothing-else included. */
function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Per-get microseconds of batches of `perTurn` gets, one batch per turn; and how many found a value. */
async function timeGets(
  engine: DiskEngine,
  keyOf: (i: number) => string,
  batches: number,
  perTurn: number,
  random: () => number,
): Promise<{ usPerGet: number[]; cpuUsPerGet: number; found: number; bytes: number }> {
  const usPerGet: number[] = [];
  let cpuUs = 0;
  let found = 0;
  let bytes = 0;
  for (let b = 0; b < batches; b += 1) {
    const keys = Array.from({ length: perTurn }, () => keyOf(Math.floor(random() * 1e9)));
    const cpuStart = threadCpuUs();
    const start = performance.now();
    for (const key of keys) {
      const value = engine.get(key);
      if (value !== undefined) {
        found += 1;
        bytes += value.length;
      }
    }
    usPerGet.push(((performance.now() - start) * 1000) / perTurn);
    cpuUs += threadCpuUs() - cpuStart;
    await nextTurn();
  }
  return { usPerGet, cpuUsPerGet: cpuUs / (batches * perTurn), found, bytes };
}

/** Bytes the engine's files hold on disk (allocated blocks) and as their sizes say. */
function filesBytes(dir: string): { allocated: number; apparent: number } {
  let allocated = 0;
  let apparent = 0;
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = statSync(full);
      if (stat.isDirectory()) walk(full);
      else {
        allocated += stat.blocks * 512;
        apparent += stat.size;
      }
    }
  };
  walk(dir);
  return { allocated, apparent };
}

/** Runs one call, returns how long it held the thread (ms), then waits for what it left pending. */
async function blocking<T>(call: () => T | Promise<T>): Promise<{ result: T; syncMs: number; totalMs: number }> {
  const start = performance.now();
  const pending = call();
  const syncMs = performance.now() - start;
  const result = await pending;
  return { result, syncMs, totalMs: performance.now() - start };
}

interface ReaderStats {
  readonly usPerGet: number[];
  readonly found: number;
  readonly gets: number;
  readonly errors: number;
  readonly firstError?: string;
}

type ReaderMessage = { readonly kind: 'ready' } | { readonly kind: 'stats'; readonly stats: ReaderStats } | { readonly kind: 'probe'; readonly found: boolean };

/** The second process: opens the store, reads random present keys 64 per turn between 'start' and 'stop'. */
async function readerMain(engineName: EngineName, dir: string, entries: number): Promise<void> {
  const engine = openEngine(engineName, dir);
  const random = mulberry32(4242);
  let reading = false;
  let stats: { usPerGet: number[]; found: number; gets: number; errors: number; firstError?: string } = { usPerGet: [], found: 0, gets: 0, errors: 0 };
  const loop = async (): Promise<void> => {
    while (reading) {
      const keys = Array.from({ length: BATCH }, () => entryKey(Math.floor(random() * entries)));
      const start = performance.now();
      for (const key of keys) {
        try {
          if (engine.get(key) !== undefined) stats.found += 1;
        } catch (err) {
          stats.errors += 1;
          stats.firstError ??= String(err);
        }
      }
      stats.usPerGet.push(((performance.now() - start) * 1000) / BATCH);
      stats.gets += BATCH;
      await nextTurn();
    }
  };
  let running: Promise<void> = Promise.resolve();
  process.on('message', (message: { kind: string; key?: string }) => {
    if (message.kind === 'start') {
      stats = { usPerGet: [], found: 0, gets: 0, errors: 0 };
      reading = true;
      running = loop();
    } else if (message.kind === 'stop') {
      reading = false;
      void running.then(() => process.send?.({ kind: 'stats', stats } satisfies ReaderMessage));
    } else if (message.kind === 'probe') {
      process.send?.({ kind: 'probe', found: engine.get(message.key ?? '') !== undefined } satisfies ReaderMessage);
    } else {
      engine.close();
      process.disconnect();
    }
  });
  process.send?.({ kind: 'ready' } satisfies ReaderMessage);
  await new Promise<void>((resolve) => process.once('disconnect', resolve));
}

/** Figures of one engine in one run, by name (see FIGURES for what each is). */
type Figures = Record<string, number>;

async function runEngine(
  name: EngineName,
  entries: number,
  valueBytes: number,
  log: (message: string) => void,
): Promise<{ figures: Figures; notes: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), `disk-engines-${name}-`));
  const figures: Figures = {};
  const notes: string[] = [];
  const engine = openEngine(name, dir);
  try {
    // An entry with fewer than BOOK_TAGS distinct books leaves BOOKS in its spare slots.
    const books = new Uint32Array(entries * BOOK_TAGS).fill(BOOKS);
    let logical = 0;
    const writeBlocking: number[] = [];
    let writeCpuUs = 0;
    let generateMs = 0;
    let generateCpuUs = 0;
    let pending: Promise<unknown> | undefined;
    const fillStart = performance.now();
    const fillCpuStart = processCpuUs();
    for (let first = 0; first < entries; first += BATCH) {
      const generateStart = performance.now();
      const generateCpuStart = threadCpuUs();
      const batch: WriteEntry[] = [];
      for (let i = first; i < Math.min(entries, first + BATCH); i += 1) {
        const entry = makeEntry(i, valueBytes, books);
        logical += entry.key.length + entry.value.length;
        batch.push(entry);
      }
      generateMs += performance.now() - generateStart;
      generateCpuUs += threadCpuUs() - generateCpuStart;
      const cpuStart = threadCpuUs();
      const start = performance.now();
      pending = engine.write(batch) ?? pending;
      writeBlocking.push(performance.now() - start);
      writeCpuUs += threadCpuUs() - cpuStart;
      await nextTurn();
    }
    await pending;
    const fillMs = performance.now() - fillStart;
    figures.fillPerSecond = entries / (fillMs / 1000);
    figures.fillGenerateShare = generateMs / fillMs;
    figures.fillCpuUsPerEntry = (processCpuUs() - fillCpuStart - generateCpuUs) / entries;
    const writes = sortedCopy(writeBlocking);
    figures.writeBlockP50Ms = percentile(writes, 50);
    figures.writeBlockP99Ms = percentile(writes, 99);
    figures.writeBlockMaxMs = writes.at(-1) ?? Number.NaN;
    figures.writeCpuMeanMs = writeCpuUs / 1000 / writes.length;
    const filled = filesBytes(dir);
    figures.logicalMiB = logical / 2 ** 20;
    figures.fileMiB = filled.allocated / 2 ** 20;
    figures.fileApparentMiB = filled.apparent / 2 ** 20;
    log(`${name}: filled ${entries} in ${(fillMs / 1000).toFixed(1)} s`);

    const random = mulberry32(99);
    await timeGets(engine, (r) => entryKey(r % entries), 100, BATCH, random);
    const hits = await timeGets(engine, (r) => entryKey(r % entries), 500, BATCH, random);
    if (hits.found !== 500 * BATCH) throw new Error(`${name}: ${500 * BATCH - hits.found} present keys not found`);
    const hitUs = sortedCopy(hits.usPerGet);
    figures.getP50Us = percentile(hitUs, 50);
    figures.getP99Us = percentile(hitUs, 99);
    figures.getCpuMeanUs = hits.cpuUsPerGet;
    const single = sortedCopy((await timeGets(engine, (r) => entryKey(r % entries), 2000, 1, random)).usPerGet);
    figures.getAloneP50Us = percentile(single, 50);
    figures.getAloneP99Us = percentile(single, 99);
    const misses = await timeGets(engine, (r) => `/v1/books?q=absent+${r}&limit=20`, 300, BATCH, random);
    if (misses.found !== 0) throw new Error(`${name}: a missing key was found`);
    const missUs = sortedCopy(misses.usPerGet);
    figures.missP50Us = percentile(missUs, 50);
    figures.missP99Us = percentile(missUs, 99);

    const extra = Math.ceil(entries / 10);
    const reader = await secondProcessReads(name, dir, entries, async () => {
      const extraBlocking: number[] = [];
      let last: Promise<unknown> | undefined;
      for (let first = entries; first < entries + extra; first += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, entries + extra - first) }, (_, k) => makeEntry(first + k, valueBytes));
        const start = performance.now();
        last = engine.write(batch) ?? last;
        extraBlocking.push(performance.now() - start);
        await nextTurn();
      }
      await last;
      return entryKey(entries + extra - 1);
    });
    figures.readerIdleP50Us = reader.idle.p50;
    figures.readerIdleP99Us = reader.idle.p99;
    figures.readerBusyP50Us = reader.busy.p50;
    figures.readerBusyP99Us = reader.busy.p99;
    figures.readerBusyGets = reader.busy.gets;
    figures.readerErrors = reader.errors;
    if (reader.firstError !== undefined) notes.push(`second process: ${reader.firstError}`);
    if (!reader.sawLastWrite) throw new Error(`${name}: the second process did not see the last entry written`);

    const counts = new Uint32Array(BOOKS + 1);
    for (const id of books) counts[id] = (counts[id] ?? 0) + 1;
    let hot = 0;
    for (let id = 1; id < BOOKS; id += 1) if ((counts[id] ?? 0) > (counts[hot] ?? 0)) hot = id;
    const hotPurge = await blocking(() => engine.purgeTag(`bk_${hot}`));
    if (hotPurge.result.entries < (counts[hot] ?? 0))
      throw new Error(`${name}: the purge of bk_${hot} removed ${hotPurge.result.entries} of ${counts[hot] ?? 0} entries`);
    figures.purgeHotEntries = hotPurge.result.entries;
    figures.purgeHotSyncMs = hotPurge.syncMs;
    figures.purgeHotTotalMs = hotPurge.totalMs;
    const hotIndex = books.findIndex((id) => id === hot);
    if (engine.get(entryKey(Math.floor(hotIndex / BOOK_TAGS))) !== undefined) throw new Error(`${name}: an entry of the purged tag is still there`);
    const purgeRandom = mulberry32(7);
    const someTags = new Set<number>();
    let purgedEntries = 0;
    let purgeMs = 0;
    while (someTags.size < 100) {
      const id = 1000 + Math.floor(purgeRandom() * (BOOKS - 1000));
      if (someTags.has(id)) continue;
      someTags.add(id);
      const purge = await blocking(() => engine.purgeTag(`bk_${id}`));
      purgedEntries += purge.result.entries;
      purgeMs += purge.totalMs;
    }
    figures.purgeTagMeanEntries = purgedEntries / someTags.size;
    figures.purgeTagMeanMs = purgeMs / someTags.size;

    const toEvict = Math.floor(entries / 10);
    const evictBlocking: number[] = [];
    let evicted = 0;
    let evictedBytes = 0;
    const evictStart = performance.now();
    while (evicted < toEvict) {
      const count = Math.min(EVICT_CHUNK, toEvict - evicted);
      const { result, syncMs } = await blocking(() => engine.evictOldest(count));
      evictBlocking.push(syncMs);
      const { entries: removed, bytes } = result;
      evicted += removed;
      evictedBytes += bytes;
      if (removed === 0) throw new Error(`${name}: eviction found nothing to evict`);
    }
    figures.evictTotalMs = performance.now() - evictStart;
    figures.evictChunkMaxMs = Math.max(...evictBlocking);
    figures.evictedMiB = evictedBytes / 2 ** 20;
    if (engine.get(entryKey(0)) !== undefined) throw new Error(`${name}: the oldest entry survived eviction`);
    figures.fileAfterMiB = filesBytes(dir).allocated / 2 ** 20;
    return { figures, notes };
  } finally {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A second process reads while idle, then while `write` runs here; then looks for the key `write` returned. */
async function secondProcessReads(
  name: EngineName,
  dir: string,
  entries: number,
  write: () => Promise<string>,
): Promise<{
  idle: { p50: number; p99: number };
  busy: { p50: number; p99: number; gets: number };
  errors: number;
  firstError?: string;
  sawLastWrite: boolean;
}> {
  const child = fork(fileURLToPath(import.meta.url), ['--reader', name, dir, String(entries)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages: ReaderMessage[] = [];
  const waiters: ((message: ReaderMessage) => void)[] = [];
  child.on('message', (message: ReaderMessage) => {
    const waiter = waiters.shift();
    if (waiter === undefined) messages.push(message);
    else waiter(message);
  });
  const next = (): Promise<ReaderMessage> => {
    const queued = messages.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      waiters.push(resolve);
      child.once('exit', (code) => {
        reject(new Error(`the second process exited (${code ?? 'signal'})`));
      });
    });
  };
  const window = async (during: () => Promise<unknown>): Promise<ReaderStats> => {
    child.send({ kind: 'start' });
    await during();
    child.send({ kind: 'stop' });
    const message = await next();
    if (message.kind !== 'stats') throw new Error('the second process answered out of turn');
    return message.stats;
  };
  try {
    if ((await next()).kind !== 'ready') throw new Error('the second process answered out of turn');
    const idle = await window(() => sleep(1000));
    let lastKey = '';
    const busy = await window(async () => {
      lastKey = await write();
    });
    child.send({ kind: 'probe', key: lastKey });
    const probe = await next();
    const summary = (stats: ReaderStats): { p50: number; p99: number } => {
      const sorted = sortedCopy(stats.usPerGet);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const firstError = idle.firstError ?? busy.firstError;
    return {
      idle: summary(idle),
      busy: { ...summary(busy), gets: busy.gets },
      errors: idle.errors + busy.errors,
      ...(firstError === undefined ? {} : { firstError }),
      sawLastWrite: probe.kind === 'probe' && probe.found,
    };
  } finally {
    child.send({ kind: 'close' });
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

interface FigureRow {
  readonly id: string;
  readonly label: string;
  readonly digits: number;
}

const FIGURES: readonly FigureRow[] = [
  { id: 'fillPerSecond', label: 'fill, entries/s (64 per transaction, one per turn)', digits: 0 },
  { id: 'fillGenerateShare', label: "fill, the generator's share of its time", digits: 2 },
  { id: 'writeBlockP50Ms', label: 'event loop held per 64-entry write, p50 ms', digits: 3 },
  { id: 'writeBlockP99Ms', label: 'event loop held per 64-entry write, p99 ms', digits: 3 },
  { id: 'writeBlockMaxMs', label: 'event loop held per 64-entry write, max ms', digits: 2 },
  { id: 'writeCpuMeanMs', label: 'CPU of that call (this thread), mean ms', digits: 3 },
  { id: 'fillCpuUsPerEntry', label: 'CPU per entry written, all threads, µs', digits: 1 },
  { id: 'logicalMiB', label: 'logical bytes (keys + values), MiB', digits: 0 },
  { id: 'fileMiB', label: 'files on disk after the fill, MiB', digits: 0 },
  { id: 'getP50Us', label: 'get of a present key, 64 per turn, p50 µs', digits: 2 },
  { id: 'getP99Us', label: 'get of a present key, 64 per turn, p99 µs', digits: 2 },
  { id: 'getCpuMeanUs', label: 'CPU of a get of a present key (this thread), mean µs', digits: 2 },
  { id: 'getAloneP50Us', label: 'get of a present key, alone in its turn, p50 µs', digits: 2 },
  { id: 'getAloneP99Us', label: 'get of a present key, alone in its turn, p99 µs', digits: 2 },
  { id: 'missP50Us', label: 'get of a missing key, 64 per turn, p50 µs', digits: 2 },
  { id: 'readerIdleP50Us', label: 'second process get, writer idle, p50 µs', digits: 2 },
  { id: 'readerIdleP99Us', label: 'second process get, writer idle, p99 µs', digits: 2 },
  { id: 'readerBusyP50Us', label: 'second process get, while this one writes N/10, p50 µs', digits: 2 },
  { id: 'readerBusyP99Us', label: 'second process get, while this one writes N/10, p99 µs', digits: 2 },
  { id: 'readerErrors', label: 'second process errors', digits: 0 },
  { id: 'purgeHotEntries', label: 'hottest book tag, entries', digits: 0 },
  { id: 'purgeHotSyncMs', label: 'purge of the hottest tag, event loop held, ms', digits: 1 },
  { id: 'purgeHotTotalMs', label: 'purge of the hottest tag, until committed, ms', digits: 1 },
  { id: 'purgeTagMeanEntries', label: '100 random book tags, mean entries', digits: 1 },
  { id: 'purgeTagMeanMs', label: 'purge of one of them, until committed, mean ms', digits: 2 },
  { id: 'evictTotalMs', label: 'evict the oldest 10 % (chunks of 1,000), total ms', digits: 0 },
  { id: 'evictChunkMaxMs', label: 'evict, event loop held per chunk, max ms', digits: 1 },
  { id: 'fileAfterMiB', label: 'files on disk after purges and eviction, MiB', digits: 0 },
];

function format(s: Spread, digits: number, runs: number): string {
  const f = (n: number): string => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a');
  return runs === 1 ? f(s.median) : `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

export interface DiskEnginesReport {
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly entries: number;
  readonly valueBytes: number;
  readonly runs: number;
  readonly engines: Record<string, { readonly figures: Record<string, Spread>; readonly perRun: readonly Figures[]; readonly notes: readonly string[] }>;
}

function markdown(report: DiskEnginesReport): string {
  const names = Object.keys(report.engines);
  const header = `| figure (${report.entries.toLocaleString('en-US')} entries of ~${report.valueBytes.toLocaleString('en-US')} B${report.runs > 1 ? `, median (min–max) of ${report.runs} runs` : ''}) | ${names.join(' | ')} |`;
  const rows = FIGURES.map(
    (row) =>
      `| ${row.label} | ${names
        .map((name) => {
          const s = report.engines[name]?.figures[row.id];
          return s === undefined ? 'n/a' : format(s, row.digits, report.runs);
        })
        .join(' | ')} |`,
  );
  return [header, `|---|${names.map(() => '---:').join('|')}|`, ...rows, ''].join('\n');
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === '--reader') {
    await readerMain(argv[1] as EngineName, argv[2] ?? '', Number(argv[3]));
    return;
  }
  const { values } = parseArgs({
    args: [...argv],
    options: {
      entries: { type: 'string', default: '200000' },
      'value-bytes': { type: 'string', default: '2000' },
      runs: { type: 'string', default: '1' },
      engines: { type: 'string', default: DEFAULT_ENGINES.join(',') },
      'no-save': { type: 'boolean', default: false },
    },
  });
  const entries = Number(values.entries);
  const runs = Number(values.runs);
  const names = values.engines.split(',') as EngineName[];
  const valueBytes = Number(values['value-bytes']);
  for (const name of names) if (!ENGINE_NAMES.includes(name)) throw new Error(`unknown engine ${name}; known: ${ENGINE_NAMES.join(', ')}`);
  if (!Number.isInteger(entries) || entries < 10_000) throw new Error('--entries must be an integer ≥ 10000');
  if (!Number.isInteger(valueBytes) || valueBytes < 200) throw new Error('--value-bytes must be an integer ≥ 200');
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');
  const log = (message: string): void => {
    process.stderr.write(`disk-engines: ${message}\n`);
  };
  const startedAt = new Date().toISOString();
  const perEngine = new Map<EngineName, { perRun: Figures[]; notes: string[] }>(names.map((name) => [name, { perRun: [], notes: [] }]));
  for (let run = 0; run < runs; run += 1) {
    // Each run takes the engines in a different order, so that neither always goes first on a warm or a cold machine.
    const order = names.map((_, i) => names[(i + run) % names.length] ?? names[0] ?? 'sqlite');
    for (const name of order) {
      const result = await runEngine(name, entries, valueBytes, log);
      const kept = perEngine.get(name);
      kept?.perRun.push(result.figures);
      kept?.notes.push(...result.notes);
    }
  }
  const report: DiskEnginesReport = {
    startedAt,
    command: ['node bench/disk-engines.ts', ...argv].join(' '),
    machine: machineInfo(),
    entries,
    valueBytes,
    runs,
    engines: Object.fromEntries(
      [...perEngine].map(([name, { perRun, notes }]) => [
        name,
        {
          figures: Object.fromEntries(Object.keys(perRun[0] ?? {}).map((id) => [id, spread(perRun.map((figures) => figures[id] ?? Number.NaN))])),
          perRun,
          notes,
        },
      ]),
    ),
  };
  process.stdout.write(markdown(report));
  if (!values['no-save']) log(`saved ${saveResults('disk-engines-latest.json', 'disk-engines', startedAt, report, true).join(', ')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
