/**
 * Builds one gateway: everything expensive (key material, the origin pool, the cache, loggers,
 * metric objects) is made here once; the request path only reads it. The clock, the log
 * destination and the metrics registry are injectable so tests drive freshness without sleeping
 * and run several gateways in one process.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { DestinationStream } from 'pino';
import { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAccessLog } from '../shared/access-log.ts';
import { createAdminServer } from '../shared/admin-server.ts';
import { baseUrl, drain, listen } from '../shared/lifecycle.ts';
import { createLogger } from '../shared/logger.ts';
import { createVerifier } from '../shared/signing-key.ts';
import { Coalescer } from './fill/coalescer.ts';
import { Filler, type FillOutcome } from './fill/fill.ts';
import { GatewayMetrics, type CacheGauges } from './metrics.ts';
import { createPipeline } from './pipeline.ts';
import { RouteTable } from './routes/route-table.ts';
import { ResponseCache } from './store/response-cache.ts';
import { OriginClient } from './upstream/origin-client.ts';

export interface GatewayDeps {
  /** Where log lines go; default per `log.destination`. */
  readonly logDestination?: DestinationStream;
  /** Default: a new Registry for this gateway. */
  readonly registry?: Registry;
  /** Milliseconds since the epoch, for cache freshness and token expiry. Default: `Date.now`. */
  readonly now?: () => number;
}

export interface RunningGateway {
  readonly url: string;
  readonly adminUrl: string;
  readonly registry: Registry;
  /** Entries and bytes in the cache now. */
  cacheStats(): CacheGauges;
  /** Stops taking requests, lets in-flight ones finish within `http.shutdownTimeoutMs`, closes. */
  stop(): Promise<void>;
}

/** Readiness probes are cached this long so scrapes and probes do not hammer the origin. */
const PROBE_CACHE_MS = 1000;

function cachedProbe(probe: () => Promise<boolean>): () => Promise<boolean> {
  let last: { readonly at: number; readonly result: Promise<boolean> } | undefined;
  return () => {
    const at = performance.now();
    if (last === undefined || at - last.at > PROBE_CACHE_MS) last = { at, result: probe() };
    return last.result;
  };
}

export async function startGateway(config: Config, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const now = deps.now ?? Date.now;
  const logger = createLogger(config, 'catalog-gateway', deps.logDestination);
  const registry = deps.registry ?? new Registry();
  const verifier = createVerifier(config, now);
  const cache: ResponseCache = new ResponseCache({
    maxBytes: config['gateway.cache.maxBytes'],
    maxEntryBytes: config['gateway.cache.maxEntryBytes'],
    onEvict: () => {
      metrics.evicted();
    },
  });
  const cacheStats = (): CacheGauges => ({ entries: cache.entries, bytes: cache.bytes });
  const metrics = new GatewayMetrics(registry, cacheStats);
  const origin = new OriginClient(config);
  const api = createServer(
    createPipeline(
      {
        maxTargetBytes: config['http.maxTargetBytes'],
        verifier,
        cache,
        coalescer: new Coalescer<FillOutcome>(),
        filler: new Filler(origin, cache, metrics, now),
        origin,
        metrics,
        accessLog: createAccessLog(logger, config['gateway.accessLog']),
        logger,
        now,
      },
      new RouteTable(config['gateway.routes'], config['auth.requiredScope']),
    ),
  );
  let draining = false;
  const originReachable = cachedProbe(() => origin.reachable());
  const admin = createAdminServer({
    registry,
    notReadyReason: async () => {
      if (draining) return 'the gateway is shutting down';
      return (await originReachable()) ? undefined : 'the origin is not reachable';
    },
  });

  const shutdownMs = config['http.shutdownTimeoutMs'];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      draining = true;
      await drain(api, shutdownMs);
      await origin.close();
      await drain(admin, shutdownMs);
      logger.info('stopped');
      logger.flush();
    })();
    return stopped;
  };

  try {
    const url = baseUrl(await listen(api, config['gateway.host'], config['gateway.port']));
    const adminUrl = baseUrl(await listen(admin, config['gateway.host'], config['gateway.adminPort']));
    logger.info({ url, adminUrl, origin: config['gateway.origin'] }, 'listening');
    return { url, adminUrl, registry, cacheStats, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
