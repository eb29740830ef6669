/**
 * What the load tools read from the servers' own `/metrics`: a snapshot before and after a run,
 * and their difference. The origin offload is measured from the origin's count of the requests it
 * served, not inferred from the gateway's cache labels.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { parsePrometheusText, type PrometheusSamples } from './prometheus-text.ts';

export async function scrapeMetrics(adminUrl: string): Promise<PrometheusSamples> {
  const { statusCode, body } = await request(`${adminUrl}/metrics`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await body.text();
  if (statusCode !== 200) throw new Error(`${adminUrl}/metrics answered ${statusCode}`);
  return parsePrometheusText(text);
}

export interface GatewayCounters {
  readonly requests: number;
  /** Requests by the `cache` label: hit, miss, collapsed, and whatever else the gateway reports. */
  readonly byCache: Readonly<Record<string, number>>;
  /** Requests the gateway sent to the origin. */
  readonly originRequests: number;
  readonly cacheEntries: number | undefined;
  readonly cacheBytes: number | undefined;
  readonly rssBytes: number | undefined;
}

export interface OriginCounters {
  readonly requests: number;
  readonly rssBytes: number | undefined;
}

function countBy(samples: PrometheusSamples, name: string, label: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of samples.select(name)) {
    const key = s.labels[label] ?? '';
    counts[key] = (counts[key] ?? 0) + s.value;
  }
  return counts;
}

export function gatewayCounters(samples: PrometheusSamples): GatewayCounters {
  return {
    requests: samples.sum('catalog_gateway_http_requests_total'),
    byCache: countBy(samples, 'catalog_gateway_http_requests_total', 'cache'),
    originRequests: samples.sum('catalog_gateway_origin_requests_total'),
    cacheEntries: samples.value('catalog_gateway_cache_entries'),
    cacheBytes: samples.value('catalog_gateway_cache_bytes'),
    rssBytes: samples.value('process_resident_memory_bytes'),
  };
}

export function originCounters(samples: PrometheusSamples): OriginCounters {
  return {
    requests: samples.sum('catalog_origin_http_requests_total'),
    rssBytes: samples.value('process_resident_memory_bytes'),
  };
}

/** Counters as increases over a run; gauges (entries, bytes, RSS) as their value at the end. */
/** Cache results that consulted the cache, and those of them answered from storage (docs/operations.md, "Metrics"). */
const LOOKUPS = ['hit', 'stale', 'revalidated', 'miss', 'collapsed'];
const FROM_STORAGE = ['hit', 'stale'];

/** The hit ratio as docs/operations.md, the recording rule and the dashboard define it; null without lookups. */
export function hitRatio(byCache: Readonly<Record<string, number>>): number | null {
  const sum = (results: readonly string[]): number => results.reduce((total, result) => total + (byCache[result] ?? 0), 0);
  const lookups = sum(LOOKUPS);
  return lookups === 0 ? null : sum(FROM_STORAGE) / lookups;
}

/** A fleet's counters: every gateway's added up (undefined figures stay undefined). */
export function sumGatewayCounters(all: readonly GatewayCounters[]): GatewayCounters | undefined {
  if (all.length === 0) return undefined;
  const sum = (pick: (c: GatewayCounters) => number | undefined): number | undefined =>
    all.some((c) => pick(c) === undefined) ? undefined : all.reduce((total, c) => total + (pick(c) ?? 0), 0);
  const byCache: Record<string, number> = {};
  for (const c of all) for (const [key, value] of Object.entries(c.byCache)) byCache[key] = (byCache[key] ?? 0) + value;
  return {
    requests: sum((c) => c.requests) ?? 0,
    byCache,
    originRequests: sum((c) => c.originRequests) ?? 0,
    cacheEntries: sum((c) => c.cacheEntries),
    cacheBytes: sum((c) => c.cacheBytes),
    rssBytes: sum((c) => c.rssBytes),
  };
}

export function gatewayIncrease(before: GatewayCounters, after: GatewayCounters): GatewayCounters {
  const byCache: Record<string, number> = {};
  for (const [key, value] of Object.entries(after.byCache)) byCache[key] = value - (before.byCache[key] ?? 0);
  return { ...after, requests: after.requests - before.requests, byCache, originRequests: after.originRequests - before.originRequests };
}

export function originIncrease(before: OriginCounters, after: OriginCounters): OriginCounters {
  return { ...after, requests: after.requests - before.requests };
}

/**
 * Reads until two reads 100 ms apart agree (at most 3 s): requests cut off when a run ends may
 * still be finishing in a server (a gateway fill outlives the client that started it), and an
 * after-snapshot must include them for the counts to add up.
 */
export async function steadyRead<T>(read: () => Promise<T>, same: (a: T, b: T) => boolean): Promise<T> {
  let last = await read();
  for (let i = 0; i < 30; i++) {
    await delay(100);
    const next = await read();
    const steady = same(last, next);
    last = next;
    if (steady) break;
  }
  return last;
}
