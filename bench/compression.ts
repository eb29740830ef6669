/**
 * What compression buys, through real processes (the real origin on the bench catalog, gateways
 * with the shipped flags): body bytes on the wire by coding, and what an entry costs the cache.
 *
 *   node bench/compression.ts [--data DIR] [--searches N, default 1000]
 *
 * Wire: N searches at the default `limit` (the catalog's most frequent title and author words, then
 * two-word phrases), each
 * asked once with no Accept-Encoding and once with each of gzip, br and zstd; the median of each
 * search's identity/coded body ratio. Entries: 180 distinct one-word searches (60 words at the
 * default limit, `limit=50` and `available=true`) filled into a fresh gateway, and
 * `catalog_gateway_cache_bytes` / `catalog_gateway_cache_entries` read: compression off (as before
 * it existed), on with gzip clients, and on with identity clients (the decoded copy kept too); then
 * the same for the 1,000 URLs `npm run bench` warms (mostly short answers), off and with gzip clients.
 * Decode: what decoding each coded body in the process costs, the price Varnish's design (one
 * compressed copy, decoded for every identity hit) would add to an identity client's hit.
 */
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { request } from 'undici';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { scrapeMetrics } from '../src/loadtest/server-metrics.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import { Fleet } from './fleet.ts';
import { spread } from './stats.ts';

const CODINGS = ['gzip', 'br', 'zstd'] as const;
/** What an entry of the 1,000-URL workload was counted before compression existed (3f143c4^, docs/performance.md). */
const BEFORE_COMPRESSION_ZIPF = 3224;
const OFF = { CATALOG_GATEWAY_COMPRESSION_ENCODINGS: '', CATALOG_GATEWAY_UPSTREAM_ACCEPT_ENCODING: 'identity' };

/**
 * What users type most: the catalog's title and author words of three letters or more, most
 * frequent first, then (the catalog has fewer than a thousand such words) its most frequent
 * two-word phrases, as URL query values.
 */
function commonSearches(texts: readonly string[]): string[] {
  const words = new Map<string, number>();
  const pairs = new Map<string, number>();
  for (const text of texts) {
    const tokens = text
      .toLowerCase()
      .split(/[^a-z]+/)
      .filter((w) => w.length > 2);
    tokens.forEach((word, i) => {
      words.set(word, (words.get(word) ?? 0) + 1);
      const next = tokens[i + 1];
      if (next !== undefined) pairs.set(`${word}%20${next}`, (pairs.get(`${word}%20${next}`) ?? 0) + 1);
    });
  }
  const byCount = (counts: Map<string, number>): string[] => [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([q]) => q);
  return [...byCount(words), ...byCount(pairs)];
}

const DECODE = { gzip: gunzipSync, br: brotliDecompressSync, zstd: zstdDecompressSync } as const;

async function body(url: string, headers: Record<string, string>): Promise<Buffer> {
  const res = await request(url, { headers });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
  return Buffer.from(await res.body.arrayBuffer());
}

async function bodyBytes(url: string, headers: Record<string, string>): Promise<number> {
  return (await body(url, headers)).length;
}

/** Microseconds to decode one of `bodies`, the least of five passes (the machine is shared). */
function decodeMicros(bodies: readonly Buffer[], decode: (b: Buffer) => Buffer): number {
  let least = Infinity;
  for (let pass = 0; pass < 5; pass++) {
    const started = performance.now();
    for (const coded of bodies) decode(coded);
    least = Math.min(least, ((performance.now() - started) * 1000) / bodies.length);
  }
  return least;
}

async function entryCost(
  fleet: Fleet,
  origin: ServerProcess,
  name: string,
  env: Record<string, string>,
  targets: readonly string[],
  headers: Record<string, string>,
): Promise<{ entries: number; bytesPerEntry: number }> {
  const gateway = await fleet.gateway(name, origin, { CATALOG_GATEWAY_ACCESS_LOG: 'false', ...env });
  for (const target of targets) await bodyBytes(`${gateway.url}${target}`, headers);
  // Asked twice: an identity client's decoded copy is made on its first hit, not at fill.
  for (const target of targets) await bodyBytes(`${gateway.url}${target}`, headers);
  const samples = await scrapeMetrics(gateway.adminUrl ?? '');
  await fleet.stop(gateway);
  const entries = samples.value('catalog_gateway_cache_entries') ?? 0;
  return { entries, bytesPerEntry: (samples.value('catalog_gateway_cache_bytes') ?? 0) / entries };
}

async function main(dataDir: string, searches: number): Promise<void> {
  const fleet = new Fleet(dataDir);
  try {
    const origin = await fleet.origin();
    const vocabulary = readCatalogVocabulary(join(fleet.dataDir, 'catalog.db'));
    const words = commonSearches([...vocabulary.titles, ...vocabulary.authors]);
    const token = await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 });
    const auth = { authorization: `Bearer ${token}` };

    const gateway = await fleet.gateway('gateway', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'false' });
    const ratios: Record<(typeof CODINGS)[number], number[]> = { gzip: [], br: [], zstd: [] };
    const totals = { identity: 0, gzip: 0, br: 0, zstd: 0 };
    const identitySizes: number[] = [];
    const coded: Record<(typeof CODINGS)[number], Buffer[]> = { gzip: [], br: [], zstd: [] };
    for (const word of words.slice(0, searches)) {
      const url = `${gateway.url}/v1/books?q=${word}`;
      const identity = await bodyBytes(url, auth);
      identitySizes.push(identity);
      totals.identity += identity;
      for (const coding of CODINGS) {
        const sent = await body(url, { ...auth, 'accept-encoding': coding });
        totals[coding] += sent.length;
        ratios[coding].push(identity / sent.length);
        if (sent.length < identity) coded[coding].push(sent);
      }
    }
    await fleet.stop(gateway);
    const sizes = spread(identitySizes);
    console.log(`wire: ${identitySizes.length} searches at the default limit, identity body median ${sizes.median} B (${sizes.min}–${sizes.max})`);
    for (const coding of CODINGS) {
      const r = spread(ratios[coding]);
      console.log(
        `  ${coding.padEnd(5)} ${r.median.toFixed(2)}× fewer body bytes, median (${r.min.toFixed(2)}–${r.max.toFixed(2)}); all bytes ${(totals.identity / totals[coding]).toFixed(2)}×; decoding one costs ${decodeMicros(coded[coding], DECODE[coding]).toFixed(1)} µs`,
      );
    }

    const targets = words.slice(0, 60).flatMap((word) => [`/v1/books?q=${word}`, `/v1/books?q=${word}&limit=50`, `/v1/books?q=${word}&available=true`]);
    const before = await entryCost(fleet, origin, 'gateway-off', OFF, targets, auth);
    const gzip = await entryCost(fleet, origin, 'gateway-gzip', {}, targets, { ...auth, 'accept-encoding': 'gzip, deflate, br, zstd' });
    const identity = await entryCost(fleet, origin, 'gateway-identity', {}, targets, auth);
    console.log(`entries: ${targets.length} distinct searches, bytes counted per entry`);
    console.log(`  compression off            ${before.bytesPerEntry.toFixed(0)} B (${before.entries} entries)`);
    console.log(
      `  on, compressing clients    ${gzip.bytesPerEntry.toFixed(0)} B: ${(before.bytesPerEntry / gzip.bytesPerEntry).toFixed(2)}× the entries per MiB`,
    );
    console.log(
      `  on, identity clients       ${identity.bytesPerEntry.toFixed(0)} B: ${(before.bytesPerEntry / identity.bytesPerEntry).toFixed(2)}× (the decoded copy kept beside the compressed one)`,
    );

    // The throughput bench's 1,000 URLs (npm run bench draws them from the same space, in this order).
    const { space } = await fleet.reader();
    const zipfTargets = Array.from({ length: 1000 }, () => space.take());
    const zipfBefore = await entryCost(fleet, origin, 'gateway-zipf-off', OFF, zipfTargets, auth);
    const zipfGzip = await entryCost(fleet, origin, 'gateway-zipf-gzip', {}, zipfTargets, { ...auth, 'accept-encoding': 'gzip, deflate, br, zstd' });
    console.log(`entries: the throughput bench's ${zipfTargets.length} URLs, bytes counted per entry`);
    console.log(`  compression off            ${zipfBefore.bytesPerEntry.toFixed(0)} B (${zipfBefore.entries} entries)`);
    console.log(
      `  on, compressing clients    ${zipfGzip.bytesPerEntry.toFixed(0)} B: ${(zipfBefore.bytesPerEntry / zipfGzip.bytesPerEntry).toFixed(2)}× the entries per MiB; ${(BEFORE_COMPRESSION_ZIPF / zipfGzip.bytesPerEntry).toFixed(2)}× the ${BEFORE_COMPRESSION_ZIPF} B of before compression`,
    );
  } finally {
    await fleet.close();
  }
}

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
await main(flag('--data') ?? 'data/bench', Number(flag('--searches') ?? 1000));
