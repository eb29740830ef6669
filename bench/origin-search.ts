/**
 * The origin's search speed on the 100,000-book catalog (not a test; prints figures):
 *
 * 1. database time per search, measured around the same calls the origin makes (ranked ids and
 *    the page of books), over thousands of distinct 1–3-word queries drawn from the catalog's
 *    own titles and author names, some with branch or availability filters;
 * 2. HTTP throughput and latency of a running origin under autocannon (50 connections, 5 s),
 *    every request a search from the same mix, the access log on (to /dev/null).
 *
 * Run: node --import tsx bench/origin-search.ts [--db PATH] [--duration SECONDS] [--connections N]
 */
import { existsSync, openSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { runLoad } from '../src/loadtest/load-run.ts';
import { CatalogDb } from '../src/origin/catalog-db.ts';
import { startOrigin } from '../src/origin/origin.ts';
import { SeededRandom } from '../src/origin/random.ts';
import { searchBooks } from '../src/origin/search.ts';
import { seedCatalog } from '../src/origin/seed.ts';
import { canonicalBooksTarget, type BooksQuery } from '../src/shared/request-target.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../src/shared/signing-key.ts';

const BOOKS = 100_000;
const QUERIES = 5000;

const { values } = parseArgs({
  options: { db: { type: 'string' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' } },
});
const dataDir = join('data', 'bench');
const dbPath = values.db ?? join(dataDir, `catalog-${BOOKS}.db`);

if (!existsSync(dbPath)) {
  const started = performance.now();
  seedCatalog(dbPath, BOOKS);
  console.log(`seeded ${BOOKS} books into ${dbPath} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Distinct searches as people type them: 1–3 consecutive words of a real title or author name. */
function queryMix(): BooksQuery[] {
  const vocabulary = readCatalogVocabulary(dbPath);
  const random = new SeededRandom(7);
  const seen = new Set<string>();
  const queries: BooksQuery[] = [];
  while (queries.length < QUERIES) {
    const source = random.chance(0.7) ? random.pick(vocabulary.titles) : random.pick(vocabulary.authors);
    const words = source.split(/\s+/);
    const length = Math.min(words.length, 1 + random.below(3));
    const start = random.below(words.length - length + 1);
    const q = words.slice(start, start + length).join(' ');
    const filter = random.next();
    const query: BooksQuery =
      filter < 0.1 ? { q, limit: 20, branch: random.pick(vocabulary.branches) } : filter < 0.15 ? { q, limit: 20, available: true } : { q, limit: 20 };
    const key = canonicalBooksTarget(query);
    if (seen.has(key)) continue;
    seen.add(key);
    queries.push(query);
  }
  return queries;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

const slowest: { target: string; micros: number }[] = [];

function dbTimes(queries: readonly BooksQuery[]): Map<string, number[]> {
  const db = new CatalogDb(dbPath);
  const times = new Map<string, number[]>([['all', []], ['term', []], ['match', []]]);
  try {
    for (const warm of queries.slice(0, 200)) searchBooks(db, warm, () => undefined);
    for (const query of queries) {
      searchBooks(db, query, (plan, seconds) => {
        times.get('all')?.push(seconds * 1e6);
        times.get(plan)?.push(seconds * 1e6);
        slowest.push({ target: canonicalBooksTarget(query), micros: seconds * 1e6 });
      });
    }
  } finally {
    db.close();
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  slowest.sort((a, b) => b.micros - a.micros);
  slowest.length = 5;
  return times;
}

async function http(queries: readonly BooksQuery[]): Promise<string> {
  const config = loadConfig({
    overrides: { dataDir, 'origin.db': dbPath, 'origin.port': 0, 'origin.adminPort': 0, 'log.level': 'info' },
  });
  const origin = await startOrigin(config, { logDestination: pino.destination({ fd: openSync('/dev/null', 'w') }) });
  try {
    const token = await mintToken(loadOrCreateSecret(secretPath(config)), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 3600 });
    const headers = { authorization: `Bearer ${token}` };
    let n = 0;
    const next = () => ({ path: canonicalBooksTarget(queries[n++ % queries.length] ?? { q: 'river', limit: 20 }), headers });
    await runLoad({ url: origin.url, connections: 10, duration: 1, requests: { next } });
    const result = await runLoad({ url: origin.url, connections: Number(values.connections), duration: Number(values.duration), requests: { next } });
    const ms = (p: number): string => result.latency.percentile(p).toFixed(2);
    return [
      `| HTTP searches/s | ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} |`,
      `| HTTP latency p50 / p99 | ${ms(50)} ms / ${ms(99)} ms |`,
      `| non-2xx / errors | ${result.non2xx} / ${result.errorCount} |`,
      `| distinct targets requested | ${Math.min(result.responses, queries.length).toLocaleString('en-US')} of ${queries.length} (cycled) |`,
    ].join('\n');
  } finally {
    await origin.stop();
  }
}

const queries = queryMix();
const times = dbTimes(queries);
const rows = [...times.entries()].map(([plan, list]) => {
  const label = plan === 'all' ? 'all searches' : plan === 'term' ? 'one word: term index' : 'several words: FTS5 bm25';
  return `| DB time, ${label} (${list.length}) | median ${percentile(list, 50).toFixed(0)} µs, p99 ${percentile(list, 99).toFixed(0)} µs, max ${percentile(list, 100).toFixed(0)} µs |`;
});
const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`\norigin search bench: ${BOOKS.toLocaleString('en-US')} books, ${queries.length} distinct queries, ${cpus().length} × ${cpu}, Node ${process.versions.node}\n`);
console.log('| measure | value |\n|---|---|');
console.log(rows.join('\n'));
console.log(await http(queries));
console.log(`\nslowest searches (DB time): ${slowest.map((s) => `${s.target} ${s.micros.toFixed(0)} µs`).join(', ')}`);
