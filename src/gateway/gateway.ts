/**
 * Builds one gateway: everything expensive (key material, the origin pool, the cache, loggers,
 * metric objects) is made here once; the request path only reads it. The clock, the log
 * destination and the metrics registry are injectable so tests drive freshness without sleeping
 * and run several gateways in one process.
 *
 * A gateway runs alone (`startGateway`: API and admin listeners), or as one of a primary's
 * workers (`startWorker`: the API listener, shared through node:cluster, with purges coming from
 * the primary, which answers the admin port for all; workers/primary.ts).
 */
import type { ServerResponse } from 'node:http';
import type { DestinationStream, Logger } from 'pino';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAccessLog } from '../shared/access-log.ts';
import { ClientAddress } from '../shared/client-address.ts';
import { parseCredentialNames } from '../shared/credentials.ts';
import type { TokenVerifier } from '../shared/auth.ts';
import { createHttpServer, httpLimits, reportRefusals, type HttpLimits, type Refusal } from '../shared/http-server.ts';
import { baseUrl, drain, listen } from '../shared/lifecycle.ts';
import { createLogger } from '../shared/logger.ts';
import { createVerifier } from '../shared/signing-key.ts';
import { startAdmin, type RunningAdmin } from './admin.ts';
import { Codec, compressionPolicy } from './encoding/compress.ts';
import { Negotiator } from './encoding/negotiate.ts';
import { Fetcher, hiddenFields } from './fill/fetch.ts';
import { Flights } from './fill/flight.ts';
import { GatewayMetrics, type CacheGauges } from './metrics.ts';
import type { GatewayAccessRecord } from './exchange.ts';
import { cacheKeyOf, createPipeline } from './pipeline.ts';
import { PurgeLog } from './purge/purge-log.ts';
import { Purger } from './purge/purger.ts';
import { RouteTable } from './routes/route-table.ts';
import { TokenBuckets } from './steps/token-bucket.ts';
import { ResponseCache, type CacheKey } from './store/response-cache.ts';
import { OriginClient } from './upstream/origin-client.ts';
import { OriginHealth } from './upstream/origin-health.ts';
import { answerPrimary, relayToSiblings } from './workers/purge-relay.ts';

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

/** A gateway's request path and what it owns, before any listener is opened. */
interface Built {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly verifier: TokenVerifier;
  readonly purger: Purger;
  readonly keyOf: (url: string) => CacheKey | undefined;
  readonly limits: HttpLimits;
  readonly onRefused: (refusal: Refusal) => void;
  readonly cacheStats: () => CacheGauges;
  readonly notReadyReason: () => string | undefined;
  readonly degradedReason: () => string | undefined;
  /** Opens the API listener and starts the probe and the fleet; returns the API's URL. */
  start(): Promise<string>;
  /** Stops taking requests, lets in-flight ones finish, closes the origin pool and the fleet. */
  stop(): Promise<void>;
}

/** `group`: the id this process's purges carry in the fleet, shared by the workers of one primary. */
async function build(config: Config, deps: GatewayDeps, group: string | undefined): Promise<Built> {
  const now = deps.now ?? Date.now;
  const logger = createLogger(config, 'catalog-gateway', deps.logDestination);
  const registry = deps.registry ?? new Registry();
  const verifier = createVerifier(config, now);
  const purges = new PurgeLog();
  const compression = compressionPolicy(config);
  const cache: ResponseCache = new ResponseCache({
    maxBytes: config['gateway.cache.maxBytes'],
    maxEntryBytes: config['gateway.cache.maxEntryBytes'],
    onEvict: () => {
      metrics.evicted();
    },
    purges,
    codec: new Codec(compression.levels),
  });
  const cacheStats = (): CacheGauges => ({ entries: cache.entries, bytes: cache.bytes });
  const unfinished = new Set<ServerResponse>();
  const health = new OriginHealth(new URL(config['gateway.upstream.probe'], config['gateway.origin']), config['gateway.upstream.probeIntervalMs']);
  const metrics = new GatewayMetrics(registry, { cache: cacheStats, inFlight: () => unfinished.size, originUp: () => health.up });
  const origin = new OriginClient(config, () => {
    health.nudge();
  });
  const tags = { header: config['gateway.purge.tagHeader'].toLowerCase(), expose: config['gateway.purge.exposeTagHeader'] };
  const redisUrl = config['gateway.redis.url'];
  // The fleet module brings ioredis (about 10 MiB of a process's memory): only a fleet loads it.
  const fleet =
    redisUrl === null
      ? undefined
      : (await import('./fleet/fleet.ts')).createFleet(config, redisUrl, {
          registry,
          logger,
          now,
          cache,
          purges,
          group,
          applyPurge: (purge) => {
            purger.apply(purge);
          },
        });
  const flights = new Flights({ fetcher: new Fetcher(origin, cache, purges, metrics, now, tags, { acceptEncoding: config['gateway.upstream.acceptEncoding'], policy: compression }), purges, metrics, logger, fleet: fleet?.tier });
  const purger = new Purger({ cache, log: purges, flights, metrics, logger, now });
  if (group !== undefined) purger.fanOutTo(relayToSiblings);
  if (fleet !== undefined) purger.fanOutTo(fleet.publishPurge, true);
  const routes = new RouteTable(config['gateway.routes'], config['auth.requiredScope']);
  const maxTargetBytes = config['http.maxTargetBytes'];
  const credentialNames = parseCredentialNames(config['http.credentialParameters']);
  let draining = false;
  const limits = httpLimits(config);
  const onRefused = reportRefusals(logger, credentialNames, (reason) => {
    metrics.refused(reason);
  });
  const api = createHttpServer(
    createPipeline(
      {
        maxTargetBytes,
        credentialNames,
        clients: new ClientAddress(config['http.trustedProxies']),
        hiddenFields: hiddenFields(tags),
        tokenLimits: new TokenBuckets(config['gateway.rateLimit.perTokenPerSecond'], config['gateway.rateLimit.perTokenBurst'], 'per-token', 'token subject', now),
        ipLimits: new TokenBuckets(config['gateway.rateLimit.perIpPerSecond'], config['gateway.rateLimit.perIpBurst'], 'per-address', 'client address', now),
        isDraining: () => draining,
        unfinished,
        verifier,
        cache,
        negotiator: new Negotiator(),
        flights,
        purger,
        origin,
        metrics,
        accessLog: createAccessLog<GatewayAccessRecord>(logger, { enabled: config['gateway.accessLog'], format: config['log.format'], credentialNames, service: 'catalog-gateway', extraFields: ['cache', 'originMs', 'encoding'] }),
        logger,
        now,
      },
      routes,
    ),
    limits,
    onRefused,
  );
  return {
    logger,
    registry,
    verifier,
    purger,
    keyOf: (url) => cacheKeyOf(routes, url, maxTargetBytes),
    limits,
    onRefused,
    cacheStats,
    notReadyReason: () => (draining ? 'the gateway is shutting down' : health.reason),
    degradedReason: () => fleet?.downReason(),
    async start() {
      // The probe's first verdict and the shared tier come first, so the first requests already
      // see the origin's state and share the fleet's cache.
      await Promise.all([health.start(), fleet?.start()]);
      return baseUrl(await listen(api, config['gateway.host'], config['gateway.port']));
    },
    async stop() {
      draining = true;
      // Answers still to come close their connection, so keep-alive clients do not send another
      // request on a connection that is about to go (nginx does the same on a graceful stop).
      for (const res of unfinished) res.shouldKeepAlive = false;
      await drain(api, config['http.shutdownTimeoutMs']);
      await Promise.all([origin.close(), health.close(), fleet?.stop()]);
    },
  };
}

/** A gateway on its own: the API listener and the admin listener. */
export async function startGateway(config: Config, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const gw = await build(config, deps, undefined);
  const { logger } = gw;
  let admin: RunningAdmin | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await gw.stop();
      await admin?.stop();
      logger.info('stopped');
      logger.flush();
    })();
    return stopped;
  };
  try {
    const url = await gw.start();
    admin = await startAdmin({ ...gw, config, now: deps.now ?? Date.now });
    const notReady = gw.notReadyReason();
    logger.info({ url, adminUrl: admin.url, origin: config['gateway.origin'], originUp: notReady === undefined }, 'listening');
    if (notReady !== undefined) logger.warn({ reason: notReady }, 'the origin is not up; /readyz answers 503 until it is');
    return { url, adminUrl: admin.url, registry: gw.registry, cacheStats: gw.cacheStats, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface RunningWorker {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * One of a primary's workers: the API listener (node:cluster shares its port among the workers),
 * its metrics collected by the primary (prom-client's AggregatorRegistry), its purges handed to
 * it by the primary. `group` is the primary's id, so the workers of one host skip each other's
 * purges on the fleet's stream (the primary has handed each of them every purge already).
 */
export async function startWorker(config: Config, group: string): Promise<RunningWorker> {
  const gw = await build(config, {}, group);
  AggregatorRegistry.setRegistries([gw.registry]);
  // prom-client answers the primary's metric requests only once an AggregatorRegistry exists in
  // the worker: constructing one installs that listener (lib/cluster.js, addListeners).
  new AggregatorRegistry();
  const onMessage = (message: unknown): void => {
    answerPrimary(message, gw.purger);
  };
  process.on('message', onMessage);
  const url = await gw.start();
  gw.logger.info({ url, pid: process.pid }, 'worker listening');
  return {
    url,
    async stop() {
      process.off('message', onMessage);
      await gw.stop();
      gw.logger.info({ pid: process.pid }, 'worker stopped');
      gw.logger.flush();
    },
  };
}
