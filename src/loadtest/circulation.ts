/**
 * `npm run loadtest -- --circulation`: searches (Zipf, through the gateway) while loans and
 * returns are made at a steady rate against the origin, with the origin caching for an hour, so
 * that only the availability events keep the gateway's answers current. Every search answer is
 * judged against what the origin had committed (availability-ledger.ts); the report gives the
 * stale reads, the origin offload and the event→purge lag, overall and second by second.
 *
 * The run warms the cache with every distinct query first (cold misses are not what is measured),
 * watches the (book, branch) pairs the most popular answers show, and returns every copy it lent
 * before it ends, so the catalog is left as it was found.
 *
 * `circulateFleet` does the same against gateways someone else started (a fleet's hosts, in
 * test/support/netns/): the searching connections are spread over the hosts, and stale reads,
 * the slowest search, offload and event purges are reported per host.
 */
import { request } from 'undici';
import type { Config } from '../config/schema.ts';
import { SeededRandom } from '../origin/random.ts';
import { catalogPath } from '../origin/seed.ts';
import type { Book } from '../shared/api-types.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../shared/signing-key.ts';
import { AvailabilityLedger } from './availability-ledger.ts';
import { readCatalogVocabulary } from './catalog-vocabulary.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import type { PrometheusSamples } from './prometheus-text.ts';
import { scrapeMetrics } from './server-metrics.ts';
import { embeddedTarget, targetConfig, UnreachableError, type LoadTarget } from './target.ts';
import { buildWorkload } from './workload.ts';

export interface CirculationOptions {
  readonly connections: number;
  readonly duration: number;
  readonly loansPerSecond: number;
  readonly allowedLagMs: number;
  readonly zipf: number;
  readonly distinct: number;
  readonly filters: number;
  readonly seed: number;
  readonly config?: string;
}

export interface CirculationSecond {
  readonly second: number;
  readonly searches: number;
  readonly staleReads: number;
  readonly flips: number;
  readonly gatewayRequests: number;
  readonly originRequests: number;
}

/** One gateway's share of a run. */
export interface CirculationHostResult {
  readonly url: string;
  readonly searches: number;
  readonly staleReads: number;
  readonly slowestSearchMs: number;
  readonly offload: number | null;
  /** Events delivered to this gateway, by outcome. */
  readonly eventsReceived: Readonly<Record<string, number>>;
  /** Event purges applied here, whichever way the event came (its own delivery, or another host's copy). */
  readonly eventPurgesApplied: number;
  readonly eventPurgesRepeated: number;
}

export interface CirculationResult {
  readonly tool: 'catalog-gateway loadtest --circulation';
  readonly startedAt: string;
  readonly options: CirculationOptions;
  readonly watchedPairs: number;
  readonly searches: number;
  readonly staleReads: number;
  /** `returned` during the run; `returnedAfter`: the copies still on loan when it ended, returned then. */
  readonly loans: { readonly made: number; readonly returned: number; readonly returnedAfter: number; readonly refused: number; readonly flips: number };
  readonly offload: number | null;
  readonly purgeLagSeconds: { readonly count: number; readonly p50: number | null; readonly p99: number | null };
  /** Webhook deliveries as the origin counts them, and events as the gateway counts them, by outcome. */
  readonly events: { readonly sent: Readonly<Record<string, number>>; readonly received: Readonly<Record<string, number>> };
  readonly searchLatencyMs: { readonly p50: number; readonly p99: number };
  readonly hosts: readonly CirculationHostResult[];
  readonly timeline: readonly CirculationSecond[];
}

export interface CirculationFleet {
  /** Gateways (URL and admin URL); the cache is warmed through the first. */
  readonly hosts: readonly [{ readonly url: string; readonly adminUrl: string }, ...{ readonly url: string; readonly adminUrl: string }[]];
  readonly originUrl: string;
  readonly originAdmin: string | undefined;
  /** The HMAC secret the servers verify tokens with. */
  readonly secret: Uint8Array;
  /** The catalog the origin serves, for the search texts. */
  readonly catalog: string;
}

interface Pair {
  readonly book: string;
  readonly branch: string;
}

/** Pairs watched: those shown by the answers of this many most popular queries. */
const WATCHED_QUERIES = 200;

async function getJson(url: string, token: string): Promise<{ status: number; body: unknown }> {
  const res = await request(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.body.text();
  return { status: res.statusCode, body: res.statusCode === 200 ? (JSON.parse(text) as unknown) : undefined };
}

/**
 * Removes the registration the run's gateway made: that gateway is gone with the run, and the
 * origin would otherwise retry every later event to it for a day.
 */
async function unregister(originUrl: string, receiver: string, admin: string): Promise<void> {
  const list = await getJson(`${originUrl}/v1/webhooks`, admin);
  for (const hook of (list.body as { results?: { id: string; url: string }[] } | undefined)?.results ?? []) {
    if (hook.url === receiver)
      await (await request(`${originUrl}/v1/webhooks/${hook.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } })).body.dump();
  }
}

/** The q-quantile of the observations a histogram gained between two scrapes, interpolated in its bucket. */
export function histogramQuantile(before: PrometheusSamples, after: PrometheusSamples, name: string, q: number): number | null {
  const buckets = after
    .select(`${name}_bucket`)
    .map((s) => ({ le: Number(s.labels.le === '+Inf' ? Infinity : s.labels.le), count: s.value - before.sum(`${name}_bucket`, { le: s.labels.le ?? '' }) }));
  buckets.sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) return le === Infinity ? lower : lower + ((le - lower) * (rank - below)) / Math.max(1, count - below);
    lower = le;
    below = count;
  }
  return lower;
}

export async function runCirculation(options: CirculationOptions, config: Config, log: (message: string) => void): Promise<CirculationResult> {
  const target: LoadTarget = await embeddedTarget({
    ...(options.config === undefined ? {} : { config: options.config }),
    env: { ...process.env, CATALOG_ORIGIN_MAX_AGE_SECONDS: '3600', CATALOG_GATEWAY_EVENTS_REGISTER: 'true', CATALOG_GATEWAY_EVENTS_UNREGISTER_ON_STOP: 'true' },
    onStep: log,
  });
  try {
    const {
      originUrl,
      urls: [url],
    } = target;
    const [adminUrl] = target.gatewayAdmins;
    if (adminUrl === undefined || originUrl === undefined) throw new UnreachableError('the circulation run needs the gateway admin and origin URLs');
    const servers = targetConfig(config, target);
    const secret = loadOrCreateSecret(secretPath(servers));
    const result = await circulateFleet(
      { hosts: [{ url, adminUrl }], originUrl, originAdmin: target.originAdmin, secret, catalog: catalogPath(servers) },
      options,
      config,
      log,
    );
    const admin = await mintToken(secret, {
      subject: 'loadtest-circulation',
      scope: 'catalog:admin',
      ttlSeconds: 600,
      issuer: config['auth.issuer'],
      audience: config['auth.audience'],
    });
    await unregister(originUrl, `${adminUrl}/events`, admin);
    return result;
  } finally {
    await target.close();
  }
}

/**
 * The run against gateways already started; `during`, when given, runs alongside the load from
 * its start (a partition, say) and the load goes on until both it and the duration are over.
 */
export async function circulateFleet(
  fleet: CirculationFleet,
  options: CirculationOptions,
  config: Config,
  log: (message: string) => void,
  during?: () => Promise<void>,
): Promise<CirculationResult> {
  const startedAt = new Date().toISOString();
  const { originUrl, secret, hosts } = fleet;
  const [{ url: gatewayUrl }] = hosts;
  const admins = hosts.map((h) => h.adminUrl);
  const mint = (scope: string): Promise<string> =>
    mintToken(secret, {
      subject: 'loadtest-circulation',
      scope,
      ttlSeconds: options.duration + 3600,
      issuer: config['auth.issuer'],
      audience: config['auth.audience'],
    });
  const reader = await mint('catalog:read');
  const writer = await mint('catalog:write');
  const workload = buildWorkload(readCatalogVocabulary(fleet.catalog), {
    seed: options.seed,
    distinct: options.distinct,
    zipfExponent: options.zipf,
    pagingShare: 0,
    filterShare: options.filters,
    subjects: 1,
    length: 1_000_000,
  });

  log(`warming the cache with ${workload.queries.length} distinct queries…`);
  const ledger = new AvailabilityLedger();
  const watched: Pair[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      for (let i = next++; i < workload.queries.length; i = next++) {
        const answer = await getJson(`${gatewayUrl}${workload.queries[i]?.target ?? '/'}`, reader);
        if (i >= WATCHED_QUERIES || answer.body === undefined) continue;
        for (const book of (answer.body as { results: Book[] }).results) {
          for (const { branch, available } of book.availability) {
            if (!ledger.watched(book.id, branch)) watched.push({ book: book.id, branch });
            ledger.watch(book.id, branch, available);
          }
        }
      }
    }),
  );
  if (watched.length === 0) throw new UnreachableError('the most popular searches found no books to lend');
  log(`circulating ${watched.length} (book, branch) pairs at ${options.loansPerSecond} loans/s while searching for ${options.duration} s…`);

  const started = performance.now();
  const secondOf = (): number => Math.floor((performance.now() - started) / 1000);
  const seconds = new Map<number, { searches: number; staleReads: number; flips: number }>();
  const at = (s: number): { searches: number; staleReads: number; flips: number } => {
    let entry = seconds.get(s);
    if (entry === undefined) {
      entry = { searches: 0, staleReads: 0, flips: 0 };
      seconds.set(s, entry);
    }
    return entry;
  };
  const deadline = started + options.duration * 1000;
  const loans = { made: 0, returned: 0, returnedAfter: 0, refused: 0, flips: 0 };
  const active = new Map<string, string[]>();
  const random = new SeededRandom(options.seed + 1);

  const pairs = new Map(watched.map((p) => [AvailabilityLedger.key(p.book, p.branch), p]));
  const pickPair = (): [string, string[]] => {
    const pair = watched[random.below(watched.length)] ?? { book: '', branch: '' };
    const key = AvailabilityLedger.key(pair.book, pair.branch);
    return [key, active.get(key) ?? []];
  };
  const circulate = async (): Promise<void> => {
    const interval = 1000 / options.loansPerSecond;
    for (let due = performance.now(); due < deadline; due += interval) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      // Half the time a copy the run lent comes back, so loans and returns keep the catalog steady.
      const lent = [...active.entries()].filter(([, paths]) => paths.length > 0);
      const giveBack = lent.length > 0 && random.chance(0.5);
      const [key, out] = giveBack ? (lent[random.below(lent.length)] ?? ['', []]) : pickPair();
      const pair = pairs.get(key);
      if (pair === undefined) continue;
      const sentAt = performance.now();
      const res = giveBack
        ? await request(`${originUrl}${out.pop() ?? ''}`, { method: 'DELETE', headers: { authorization: `Bearer ${writer}` } })
        : await request(`${originUrl}/v1/loans`, {
            method: 'POST',
            headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
            body: JSON.stringify(pair),
          });
      const text = await res.body.text();
      if (res.statusCode === 201) {
        out.push(`/v1/loans/${(JSON.parse(text) as { id: string }).id}`);
        loans.made++;
      } else if (res.statusCode === 204) loans.returned++;
      else loans.refused++;
      active.set(key, out);
      const book = await getJson(`${originUrl}/v1/books/${pair.book}`, reader);
      const knownAt = performance.now();
      for (const { branch, available } of (book.body as Book | undefined)?.availability ?? []) {
        if (ledger.record(pair.book, branch, { sentAt, knownAt, available })) {
          loans.flips++;
          at(secondOf()).flips++;
        }
      }
    }
  };

  const latency = new LatencyHistogram();
  const perHost = hosts.map(() => ({ searches: 0, staleReads: 0, slowestMs: 0 }));
  let cursor = 0;
  let duringOver = during === undefined;
  const search = async (connection: number): Promise<void> => {
    const host = connection % hosts.length;
    const mine = perHost[host] ?? { searches: 0, staleReads: 0, slowestMs: 0 };
    while (performance.now() < deadline || !duringOver) {
      const query = workload.queries[workload.order[cursor++ % workload.order.length] ?? 0];
      const sentAt = performance.now();
      const answer = await getJson(`${hosts[host]?.url ?? gatewayUrl}${query?.target ?? '/'}`, reader);
      const receivedAt = performance.now();
      latency.record(receivedAt - sentAt);
      mine.slowestMs = Math.max(mine.slowestMs, receivedAt - sentAt);
      const second = at(secondOf());
      mine.searches++;
      second.searches++;
      for (const book of (answer.body as { results?: Book[] } | undefined)?.results ?? []) {
        for (const { branch, available } of book.availability) {
          if (ledger.isStale(book.id, branch, available, sentAt, receivedAt, options.allowedLagMs)) {
            mine.staleReads++;
            second.staleReads++;
          }
        }
      }
    }
  };

  const scrapeAll = (): Promise<PrometheusSamples[]> => Promise.all(admins.map(scrapeMetrics));
  const total = (samples: readonly PrometheusSamples[], name: string, labels?: Record<string, string>): number =>
    samples.reduce((t, s) => t + s.sum(name, labels), 0);
  const scrapes = new Map<number, Promise<PrometheusSamples[]>>();
  const first = await scrapeAll();
  const originFirst = fleet.originAdmin === undefined ? undefined : await scrapeMetrics(fleet.originAdmin);
  const ticker = setInterval(() => scrapes.set(secondOf(), scrapeAll()), 1000);
  const alongside = during?.().finally(() => {
    duringOver = true;
  });
  await Promise.all([circulate(), alongside, ...Array.from({ length: options.connections }, (_, i) => search(i))]);
  clearInterval(ticker);
  const last = await scrapeAll();
  const originLast = fleet.originAdmin === undefined ? undefined : await scrapeMetrics(fleet.originAdmin);
  const byOutcome = (before: PrometheusSamples | undefined, after: PrometheusSamples | undefined, name: string): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const sample of after?.select(name) ?? []) {
      const outcome = sample.labels.outcome ?? '';
      counts[outcome] = sample.value - (before?.sum(name, { outcome }) ?? 0);
    }
    return counts;
  };

  const stillOut = [...active.values()].flat();
  log(`returning the ${stillOut.length} copies still on loan from the run…`);
  for (const path of stillOut) {
    const res = await request(`${originUrl}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${writer}` } });
    await res.body.dump();
    if (res.statusCode === 204) loans.returnedAfter++;
  }

  const timeline: CirculationSecond[] = [];
  let previous = first;
  for (const second of [...scrapes.keys()].sort((a, b) => a - b)) {
    const now = await scrapes.get(second);
    if (now === undefined) continue;
    const counts = seconds.get(second - 1) ?? { searches: 0, staleReads: 0, flips: 0 };
    timeline.push({
      second: second - 1,
      ...counts,
      gatewayRequests: total(now, 'catalog_gateway_http_requests_total') - total(previous, 'catalog_gateway_http_requests_total'),
      originRequests: total(now, 'catalog_gateway_origin_requests_total') - total(previous, 'catalog_gateway_origin_requests_total'),
    });
    previous = now;
  }
  const offload = (before: readonly PrometheusSamples[], after: readonly PrometheusSamples[]): number | null => {
    const requests = total(after, 'catalog_gateway_http_requests_total') - total(before, 'catalog_gateway_http_requests_total');
    const originRequests = total(after, 'catalog_gateway_origin_requests_total') - total(before, 'catalog_gateway_origin_requests_total');
    return requests === 0 ? null : 1 - originRequests / requests;
  };
  const purges = 'catalog_gateway_event_purges_total';
  const hostResults = hosts.map(({ url }, i): CirculationHostResult => {
    const before = first.slice(i, i + 1);
    const after = last.slice(i, i + 1);
    const mine = perHost[i] ?? { searches: 0, staleReads: 0, slowestMs: 0 };
    return {
      url,
      searches: mine.searches,
      staleReads: mine.staleReads,
      slowestSearchMs: Math.round(mine.slowestMs),
      offload: offload(before, after),
      eventsReceived: byOutcome(before[0], after[0], 'catalog_gateway_events_received_total'),
      eventPurgesApplied: total(after, purges, { result: 'applied' }) - total(before, purges, { result: 'applied' }),
      eventPurgesRepeated: total(after, purges, { result: 'repeat' }) - total(before, purges, { result: 'repeat' }),
    };
  });
  const lag = 'catalog_gateway_purge_lag_seconds';
  const [firstHost] = first;
  const [lastHost] = last;
  return {
    tool: 'catalog-gateway loadtest --circulation',
    startedAt,
    options,
    watchedPairs: watched.length,
    searches: hostResults.reduce((t, h) => t + h.searches, 0),
    staleReads: hostResults.reduce((t, h) => t + h.staleReads, 0),
    loans,
    offload: offload(first, last),
    purgeLagSeconds: {
      count: total(last, `${lag}_count`) - total(first, `${lag}_count`),
      p50: firstHost === undefined || lastHost === undefined ? null : histogramQuantile(firstHost, lastHost, lag, 0.5),
      p99: firstHost === undefined || lastHost === undefined ? null : histogramQuantile(firstHost, lastHost, lag, 0.99),
    },
    events: {
      sent: byOutcome(originFirst, originLast, 'catalog_origin_event_deliveries_total'),
      received: hostResults.reduce<Record<string, number>>((sum, h) => {
        for (const [outcome, n] of Object.entries(h.eventsReceived)) sum[outcome] = (sum[outcome] ?? 0) + n;
        return sum;
      }, {}),
    },
    searchLatencyMs: { p50: latency.percentile(50), p99: latency.percentile(99) },
    hosts: hostResults,
    timeline,
  };
}

function percent(x: number | null): string {
  return x === null ? 'n/a' : `${(x * 100).toFixed(2)} %`;
}

function ms(seconds: number | null): string {
  return seconds === null ? 'n/a' : `${(seconds * 1000).toFixed(1)} ms`;
}

export function formatCirculation(r: CirculationResult): string {
  const rows = [];
  for (let from = 0; from < r.timeline.length; from += 10) {
    const slice = r.timeline.slice(from, from + 10);
    const sum = (f: (s: CirculationSecond) => number): number => slice.reduce((t, s) => t + f(s), 0);
    const requests = sum((s) => s.gatewayRequests);
    rows.push(
      `  ${String(from).padStart(4)}–${String(from + slice.length).padEnd(4)} s  searches ${String(sum((s) => s.searches)).padStart(7)}  flips ${String(sum((s) => s.flips)).padStart(3)}  stale ${String(sum((s) => s.staleReads)).padStart(3)}  offload ${percent(requests === 0 ? null : 1 - sum((s) => s.originRequests) / requests)}`,
    );
  }
  return [
    `circulation  ${r.options.loansPerSecond} loans/s for ${r.options.duration} s, ${r.options.connections} searching connections, ${r.watchedPairs} watched (book, branch) pairs`,
    `loans        ${r.loans.made} lent: ${r.loans.returned} returned during the run, ${r.loans.returnedAfter} after it; ${r.loans.refused} refused; ${r.loans.flips} availability flips`,
    `searches     ${r.searches} (p50 ${r.searchLatencyMs.p50.toFixed(2)} ms, p99 ${r.searchLatencyMs.p99.toFixed(2)} ms)`,
    `stale reads  ${r.staleReads} beyond ${r.options.allowedLagMs} ms`,
    `offload      ${percent(r.offload)} of gateway requests answered without the origin`,
    `events       origin ${JSON.stringify(r.events.sent)}, gateway ${JSON.stringify(r.events.received)}`,
    `purge lag    event timestamp → purge: p50 ${ms(r.purgeLagSeconds.p50)}, p99 ${ms(r.purgeLagSeconds.p99)} (${r.purgeLagSeconds.count} events)`,
    'over time',
    ...rows,
    '',
  ].join('\n');
}
