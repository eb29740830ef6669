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
import { isStream, type Reply } from '../shared/message-seam.ts';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAccessLog } from '../shared/access-log.ts';
import { httpLimits } from '../shared/http-server.ts';
import { Codec } from '../shared/encoding/codec.ts';
import { compressionPolicy } from '../shared/encoding/policy.ts';
import type { RunningAdmin } from './admin.ts';
import { Negotiator } from './encoding/negotiator.ts';
import { resumption } from './events/resume.ts';
import { CacheStatusValues } from './cache-outcome.ts';
import { Fetcher, hiddenFields } from './fill/fetch.ts';
import { Flights } from './fill/flight.ts';
import { HostFill } from './workers/host-fill.ts';
import { createListener } from './listeners/listener.ts';
import { GatewayMetrics, type CacheGauges } from './metrics.ts';
import type { GatewayAccessRecord } from './exchange.ts';
import { createPipeline } from './pipeline.ts';
import { openAdmin, processParts, refusals, type GatewayDeps, type ProcessParts } from './process-parts.ts';
import { PurgeLog } from './purge/purge-log.ts';
import { Purger } from './purge/purger.ts';
import type { ReloadOutcome } from './reload/live-config.ts';
import { liveListenerLimits, livePipeline } from './reload/live-parts.ts';
import { DiskMetrics } from './store/disk/disk-metrics.ts';
import { diskPath, DiskStore } from './store/disk/disk-store.ts';
import { ResponseCache } from './store/memory/response-cache.ts';
import type { TierSize } from './store/tier.ts';
import { Tiers } from './store/tiers.ts';
import { OriginClient } from './upstream/origin-client.ts';
import { answerPrimary, relayToSiblings } from './workers/purge-relay.ts';
import { isConfigOrder } from './workers/messages.ts';
import { listenOnOwnSocket } from './workers/reuse-port.ts';

export type { GatewayDeps } from './process-parts.ts';

export interface RunningGateway {
  readonly url: string;
  readonly adminUrl: string;
  readonly registry: Registry;
  /** Entries and bytes in the cache now. */
  cacheStats(): CacheGauges;
  /** Re-reads the configuration with `load` and applies what can change live (reload/live-config.ts). */
  reload(load: () => Config): ReloadOutcome;
  /** Stops taking requests, lets in-flight ones finish within `http.shutdownTimeoutMs`, closes. */
  stop(): Promise<void>;
}

/** A serving gateway (alone or a worker) before any listener is opened. */
interface Built {
  readonly parts: ProcessParts;
  readonly purger: Purger;
  readonly metrics: GatewayMetrics;
  readonly cacheStats: () => CacheGauges;
  readonly notReadyReason: () => string | undefined;
  readonly degradedReason: () => string | undefined;
  /** Opens the API listener and starts the probe and the fleet; returns the API's URL. */
  start(): Promise<string>;
  /** Stops taking requests, lets in-flight ones finish, closes the origin pool and the fleet. */
  stop(): Promise<void>;
}

/** The memory tier as configured: the gateway's own, and what the benches that measure it build. */
export function memoryTier(config: Config, purges: PurgeLog): ResponseCache {
  return new ResponseCache({
    maxBytes: config['gateway.cache.maxBytes'],
    maxEntryBytes: config['gateway.cache.maxEntryBytes'],
    purges,
    admission: config['gateway.cache.admission'],
    codec: new Codec(compressionPolicy(config).levels),
  });
}

/**
 * The composition root's second half: the cache, the fleet, the single flight, the purger and the
 * request path of a process that serves the API. Each part is made after what it uses.
 * `group`: the id this process's purges carry in the fleet, shared by the workers of one primary.
 */
async function build(parts: ProcessParts, group: string | undefined, owner: number): Promise<Built> {
  const { config, logger, registry, now, live, verifier, health, credentialNames } = parts;
  const purges = new PurgeLog();
  const compression = compressionPolicy(config);
  const memory = memoryTier(config, purges);
  const disk: DiskStore | undefined = config['gateway.cache.disk.enabled']
    ? new DiskStore({
        dir: diskPath(config),
        maxBytes: config['gateway.cache.disk.maxBytes'],
        maxEntryBytes: config['gateway.cache.maxEntryBytes'],
        owner,
        maker: memory.maker,
        purges,
        metrics: new DiskMetrics(registry, (): TierSize | undefined => disk?.size()),
        logger,
        now,
      })
    : undefined;
  const tiers = new Tiers(memory, disk, purges);
  const cacheStats = (): CacheGauges => ({
    entries: memory.entries,
    bytes: memory.bytes,
    evictions: memory.evictions,
    admitted: memory.admitted,
    refused: memory.refused,
    shifts: memory.shifts,
    windowShare: memory.windowShare,
  });
  const unfinished = new Set<Reply>();
  const origin = new OriginClient(config, () => {
    health.nudge();
  });
  const metrics = new GatewayMetrics(
    registry,
    {
      cache: cacheStats,
      inFlight: () => unfinished.size,
      fillWaiting: (): number => flights.waiting,
      originUp: () => health.up,
      originConnections: () => origin.connections,
    },
    { gcDurations: config['gateway.metrics.gcDurations'] },
  );
  const purger = new Purger({ tiers, log: purges, metrics, logger, now });
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
          maker: memory.maker,
          purges,
          group,
          applyPurge: (purge) => {
            purger.apply(purge);
          },
        });
  // The workers of a host share its disk tier, and take turns at a fill under their primary's locks.
  const host = group !== undefined && disk !== undefined ? new HostFill({ disk, now }) : undefined;
  const flights = new Flights({
    fetcher: new Fetcher(origin, memory.maker, metrics, now, tags, { acceptEncoding: config['gateway.upstream.acceptEncoding'], policy: compression }),
    tiers,
    purger,
    metrics,
    logger,
    fleet: fleet?.tier,
    host,
  });
  purger.detaches(flights);
  if (group !== undefined) purger.fanOutTo(relayToSiblings);
  if (fleet !== undefined) purger.fanOutTo(fleet.publishPurge, true);
  const resume = resumption(config, { purger, registry, logger, now });
  let draining = false;
  const hidden = hiddenFields(tags);
  const pipeline = livePipeline(live, {
    credentialNames,
    routesOf: parts.routesOf,
    now,
    edge: { isDraining: () => draining, unfinished },
    authenticate: { verifier },
    cached: {
      tiers,
      negotiator: new Negotiator(),
      statusValues: new CacheStatusValues(),
      flights,
      partitionMaxAgeMs: () => fleet?.partitionMaxAgeMs(),
      origin,
      hiddenFields: hidden,
      metrics,
      logger,
      now,
    },
    forward: { origin, hiddenFields: hidden, purger, keyOf: parts.keyOf, metrics, logger },
    log: {
      metrics,
      accessLog: createAccessLog<GatewayAccessRecord>(logger, {
        enabled: config['gateway.accessLog'],
        format: config['log.format'],
        service: 'catalog-gateway',
        extraFields: ['cache', 'originMs', 'encoding'],
      }),
      logger,
    },
  });
  const api = createListener(createPipeline(pipeline), config, {
    limits: httpLimits(config),
    onRefused: refusals(parts, (reason) => {
      metrics.refused(reason);
    }),
    logger,
    registry,
    now,
  });
  liveListenerLimits(live, api);
  return {
    parts,
    purger,
    metrics,
    cacheStats,
    notReadyReason: () => (draining ? 'the gateway is shutting down' : health.reason),
    degradedReason: () => fleet?.downReason(),
    async start() {
      // The probe's first verdict and the shared tier come first, so the first requests already
      // see the origin's state and share the fleet's cache.
      await Promise.all([health.start(), fleet?.start()]);
      host?.start();
      await resume?.atStart((disk?.size().entries ?? 0) > 0);
      // Workers leave the poll to their primary, which answers the events for all of them.
      if (group === undefined) resume?.poll();
      // A worker of `gateway.workerAccept: reuseport` listens where its primary holds the port.
      if (group !== undefined && config['gateway.workerAccept'] === 'reuseport')
        return listenOnOwnSocket((host, port, reusePort) => api.listen(host, port, reusePort));
      return api.listen(config['gateway.host'], config['gateway.port']);
    },
    async stop() {
      draining = true;
      // Answers still to come close their connection, so keep-alive clients do not send another
      // request on a connection that is about to go (nginx does the same on a graceful stop).
      for (const res of unfinished) if (!isStream(res)) res.shouldKeepAlive = false;
      await api.drain(config['http.shutdownTimeoutMs']);
      await Promise.all([origin.close(), health.close(), fleet?.stop(), resume?.stop()]);
      host?.stop();
      disk?.close();
    },
  };
}

/** A gateway on its own: the API listener and the admin listener. */
export async function startGateway(config: Config, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const gw = await build(processParts(config, deps), undefined, process.pid);
  const { logger, live, registry } = gw.parts;
  let admin: RunningAdmin | undefined;
  let stopped: Promise<void> | undefined;
  const release = async (): Promise<void> => {
    await gw.stop();
    await admin?.stop();
  };
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await release();
      logger.info('stopped');
      logger.flush();
    })();
    return stopped;
  };
  try {
    const url = await gw.start();
    admin = await openAdmin(gw.parts, {
      purger: gw.purger,
      notReadyReason: gw.notReadyReason,
      degradedReason: gw.degradedReason,
      countRefusal: (reason) => {
        gw.metrics.refused(reason);
      },
    });
    const notReady = gw.notReadyReason();
    logger.info({ url, adminUrl: admin.url, origin: config['gateway.origin'], originUp: notReady === undefined, pid: process.pid }, 'listening');
    if (notReady !== undefined) logger.warn({ reason: notReady }, 'the origin is not up; /readyz answers 503 until it is');
    return { url, adminUrl: admin.url, registry, cacheStats: gw.cacheStats, reload: (load) => live.reload(load), stop };
  } catch (err) {
    // It never served, so no `stopped` line: the caller says why it could not start.
    await release();
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
  // prom-client answers the primary's metric requests only once an AggregatorRegistry exists in
  // the worker: constructing one installs that listener (lib/cluster.js, addListeners). It comes
  // first, since the primary asks every forked worker, and one still starting (the shared tier
  // is joined before listening) that does not answer fails the whole scrape.
  const registry = new Registry();
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry();
  // The disk tier is the host's, owned by the primary for all its workers.
  const gw = await build(processParts(config, { registry }), group, process.ppid);
  const onMessage = (message: unknown): void => {
    // The primary has loaded and validated it (workers/primary.ts); what is live applies here too.
    if (isConfigOrder(message)) gw.parts.live.apply(message.config);
    else answerPrimary(message, gw.purger);
  };
  process.on('message', onMessage);
  const url = await gw.start().catch(async (err: unknown) => {
    process.off('message', onMessage);
    await gw.stop();
    throw err;
  });
  gw.parts.logger.info({ url, pid: process.pid }, 'worker listening');
  return {
    url,
    async stop() {
      process.off('message', onMessage);
      await gw.stop();
      gw.parts.logger.info({ pid: process.pid }, 'worker stopped');
      gw.parts.logger.flush();
    },
  };
}
