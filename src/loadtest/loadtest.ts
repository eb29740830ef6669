/**
 * `npm run loadtest` from parsed options to a result: pick the target, plan the workload from the
 * catalog, mint the tokens, snapshot both servers' metrics, send the load, snapshot again, and
 * put the figures together. Printing and exit codes are main.ts's business.
 */
import { existsSync } from 'node:fs';
import { request } from 'undici';
import type { Config } from '../config/schema.ts';
import { catalogPath } from '../origin/seed.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../shared/signing-key.ts';
import type { LoadtestOptions } from './args.ts';
import { readCatalogVocabulary } from './catalog-vocabulary.ts';
import { runLoad, type PlannedRequest } from './load-run.ts';
import { machineInfo } from './machine.ts';
import type { LoadtestResult, TimelinePoint } from './result.ts';
import {
  gatewayCounters,
  gatewayIncrease,
  sumGatewayCounters,
  hitRatio,
  originCounters,
  originIncrease,
  scrapeMetrics,
  steadyRead,
  type GatewayCounters,
  type OriginCounters,
} from './server-metrics.ts';
import { embeddedTarget, externalTarget, targetConfig, type LoadTarget } from './target.ts';
import { buildWorkload, crawlTarget, crawlWords, CRAWL, resolvePaging, type QueryKind, type Workload } from './workload.ts';

export class LoadtestSetupError extends Error {
  override name = 'LoadtestSetupError';
}

export interface LoadtestIo {
  /** Progress messages (stderr). */
  readonly log: (message: string) => void;
  /** The command line, recorded in the result. */
  readonly command: string;
  readonly progressBar: boolean;
}

/** A planned list this long is cycled by runs that send more requests than it holds. */
const DEFAULT_PLANNED_REQUESTS = 200_000;

async function tokensFor(config: Config, secretFile: string, subjects: number, ttlSeconds: number): Promise<string[]> {
  const secret = loadOrCreateSecret(secretFile);
  return Promise.all(
    Array.from({ length: subjects }, (_, i) =>
      mintToken(secret, {
        subject: `loadtest-user-${String(i + 1).padStart(3, '0')}`,
        scope: config['auth.requiredScope'],
        ttlSeconds,
        issuer: config['auth.issuer'],
        audience: config['auth.audience'],
      }),
    ),
  );
}

async function nextLink(url: string, target: string, token: string): Promise<string | null> {
  const { statusCode, body } = await request(`${url}${target}`, { headers: { authorization: `Bearer ${token}` } });
  if (statusCode === 401 || statusCode === 403) {
    await body.dump();
    throw new LoadtestSetupError(`the gateway refuses the load test's tokens (${statusCode}): is --secret-file the secret it verifies with?`);
  }
  if (statusCode !== 200) {
    await body.dump();
    return null;
  }
  const page = (await body.json()) as { next?: unknown };
  return typeof page.next === 'string' ? page.next : null;
}

interface Snapshot {
  readonly gateway: GatewayCounters | undefined;
  readonly origin: OriginCounters | undefined;
}

/** The gateways' counters added up: one gateway's, or a fleet's. */
async function fleetCounters(admins: readonly string[]): Promise<GatewayCounters | undefined> {
  return sumGatewayCounters(await Promise.all(admins.map(async (admin) => gatewayCounters(await scrapeMetrics(admin)))));
}

async function snapshot(target: LoadTarget): Promise<Snapshot> {
  const [gateway, origin] = await Promise.all([
    fleetCounters(target.gatewayAdmins),
    target.originAdmin === undefined ? undefined : scrapeMetrics(target.originAdmin).then(originCounters),
  ]);
  return { gateway, origin };
}

async function settledSnapshot(target: LoadTarget): Promise<Snapshot> {
  return steadyRead(
    () => snapshot(target),
    (a, b) =>
      a.gateway?.requests === b.gateway?.requests && a.gateway?.originRequests === b.gateway?.originRequests && a.origin?.requests === b.origin?.requests,
  );
}

function countKinds(workload: Workload): Record<QueryKind, number> {
  const kinds: Record<QueryKind, number> = { search: 0, filter: 0, paging: 0 };
  for (const q of workload.queries) kinds[q.kind]++;
  return kinds;
}

export async function runLoadtest(options: LoadtestOptions, config: Config, io: LoadtestIo): Promise<LoadtestResult> {
  const startedAt = new Date().toISOString();
  const externalSecret = options.secretFile ?? secretPath(config);
  if (options.urls !== undefined && !existsSync(externalSecret)) {
    throw new LoadtestSetupError(`signing secret ${externalSecret} does not exist; pass the gateway's with --secret-file`);
  }
  const [firstUrl, ...otherUrls] = options.urls ?? [];
  const target =
    firstUrl === undefined
      ? await embeddedTarget({ ...(options.config === undefined ? {} : { config: options.config }), onStep: io.log })
      : await externalTarget([firstUrl, ...otherUrls], options.gatewayAdmins ?? [], options.originAdmin);
  const servers = targetConfig(config, target);
  const secretFile = options.secretFile ?? secretPath(servers);
  try {
    const vocabulary = readCatalogVocabulary(options.db ?? catalogPath(servers));
    const workload = buildWorkload(vocabulary, {
      seed: options.seed,
      distinct: options.distinct,
      zipfExponent: options.zipf,
      pagingShare: options.paging,
      filterShare: options.filters,
      subjects: options.subjects,
      length: options.amount ?? DEFAULT_PLANNED_REQUESTS,
      crawlerShare: options.crawler,
    });
    const words = options.crawler > 0 ? crawlWords(vocabulary) : [];
    const tokens = await tokensFor(config, secretFile, options.subjects, Math.max(3600, (options.duration ?? 0) + 600));
    const coding = options.acceptEncoding === undefined ? {} : { 'accept-encoding': options.acceptEncoding };
    const headers = tokens.map((t) => ({ authorization: `Bearer ${t}`, ...coding }));
    // Resolving second pages sends requests too; they are counted apart from the run's.
    const initial = await snapshot(target);
    io.log(`planning: ${workload.queries.length} distinct queries; resolving second pages through the gateway…`);
    const firstToken = tokens[0] ?? '';
    const [pagingUrl] = target.urls;
    await nextLink(pagingUrl, workload.queries[0]?.target ?? '/v1/books?q=a', firstToken);
    const targets = await resolvePaging(workload, (t) => nextLink(pagingUrl, t, firstToken));
    let cursor = 0;
    let crawled = 0;
    // Which distinct queries the run asked, so origin calls can be set against them.
    const asked = new Set<number>();
    const source = {
      next: (): PlannedRequest => {
        const i = cursor++ % workload.order.length;
        const query = workload.order[i] ?? 0;
        const subject = headers[workload.subjectOf[i] ?? 0] ?? {};
        if (query === CRAWL) return { path: crawlTarget(words, crawled++), headers: subject };
        asked.add(query);
        return { path: targets[query] ?? '/', headers: subject };
      },
    };
    const before = await snapshot(target);
    const perSecond = new Map<number, Promise<GatewayCounters | undefined>>();
    const admins = target.gatewayAdmins;
    const run = await runLoad({
      urls: target.urls,
      connections: options.connections,
      ...(options.amount === undefined ? { duration: options.duration ?? 30 } : { amount: options.amount }),
      ...(options.rate === undefined ? {} : { rate: options.rate }),
      requests: source,
      progress: io.progressBar,
      ...(admins.length === 0
        ? {}
        : {
            onSecond: (second: number) =>
              perSecond.set(
                second,
                fleetCounters(admins).catch(() => undefined),
              ),
          }),
    });
    const after = await settledSnapshot(target);
    const cacheTimeline = await cacheTimelineOf(before.gateway, perSecond);
    const cache = before.gateway !== undefined && after.gateway !== undefined ? gatewayIncrease(before.gateway, after.gateway) : undefined;
    const origin = before.origin !== undefined && after.origin !== undefined ? originIncrease(before.origin, after.origin) : undefined;
    const timeline: TimelinePoint[] = run.timeline.map((p) => ({
      ...p,
      hitRatio: cacheTimeline.get(p.second)?.hitRatio ?? null,
      offload: cacheTimeline.get(p.second)?.offload ?? null,
    }));
    return {
      tool: 'catalog-gateway loadtest',
      startedAt,
      command: io.command,
      machine: machineInfo(),
      target: { mode: target.mode, urls: target.urls, gatewayAdmins: target.gatewayAdmins, originAdmin: target.originAdmin ?? null },
      workload: {
        seed: options.seed,
        zipf: options.zipf,
        distinct: options.distinct,
        pagingShare: options.paging,
        filterShare: options.filters,
        crawlerShare: options.crawler,
        subjects: options.subjects,
        plannedRequests: workload.order.length,
        queriesByKind: countKinds(workload),
        topTargets: targets.slice(0, 10),
      },
      load: {
        connections: options.connections,
        duration: options.amount === undefined ? (options.duration ?? 30) : null,
        amount: options.amount ?? null,
        rate: options.rate ?? null,
      },
      results: {
        durationSeconds: run.durationSeconds,
        requests: run.responses,
        requestsPerSecond: run.requestsPerSecond,
        bytes: run.bytes,
        latencyMs: {
          mean: run.latency.mean,
          p50: run.latency.percentile(50),
          p90: run.latency.percentile(90),
          p99: run.latency.percentile(99),
          max: run.latency.max,
        },
        distinctQueriesAsked: asked.size,
        crawlerRequests: crawled,
        statusCounts: run.statusCounts,
        non2xx: run.non2xx,
        errorCount: run.errorCount,
        errors: run.errors,
      },
      cache:
        cache === undefined
          ? null
          : {
              requests: cache.requests,
              byCache: cache.byCache,
              hitRatio: hitRatio(cache.byCache) ?? 0,
              originRequests: cache.originRequests,
              entries: cache.cacheEntries ?? null,
              bytes: cache.cacheBytes ?? null,
            },
      origin:
        origin === undefined
          ? null
          : {
              originCalls: origin.requests,
              setupCalls: initial.origin === undefined || before.origin === undefined ? 0 : originIncrease(initial.origin, before.origin).requests,
              offload: cache === undefined || cache.requests === 0 ? null : 1 - origin.requests / cache.requests,
              callsPerDistinctQuery: asked.size === 0 ? null : origin.requests / asked.size,
            },
      memory: { gatewayRssBytes: after.gateway?.rssBytes ?? null, originRssBytes: after.origin?.rssBytes ?? null },
      timeline,
      latencyDistribution: run.latency.distribution(),
    };
  } finally {
    await target.close();
  }
}

/** Per-second hit ratio and offload from the gateway's counters scraped once a second during the run. */
async function cacheTimelineOf(
  start: GatewayCounters | undefined,
  perSecond: ReadonlyMap<number, Promise<GatewayCounters | undefined>>,
): Promise<Map<number, { readonly hitRatio: number | null; readonly offload: number }>> {
  const ratios = new Map<number, { readonly hitRatio: number | null; readonly offload: number }>();
  let previous = start;
  for (const second of [...perSecond.keys()].sort((a, b) => a - b)) {
    const now = await perSecond.get(second);
    if (now === undefined || previous === undefined) {
      previous = now;
      continue;
    }
    const step = gatewayIncrease(previous, now);
    if (step.requests > 0) ratios.set(second, { hitRatio: hitRatio(step.byCache), offload: 1 - step.originRequests / step.requests });
    previous = now;
  }
  return ratios;
}
