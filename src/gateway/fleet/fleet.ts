/**
 * The fleet's parts for one process, made when `gateway.redis.url` is set: the link to Redis,
 * the purge stream, the shared tier and the key locks. The gateway sees only what this returns:
 * the tier the single flight uses (../fill/flight.ts) and the fan-out its purges go through.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { answersAsIs, type SharedFill } from '../fill/fill-lock.ts';
import type { Purge, PurgeLog } from '../purge/purge-log.ts';
import type { PurgeFanOut } from '../purge/purger.ts';
import { RedisStore } from '../store/redis-store.ts';
import type { EntryMaker } from '../store/stored-response.ts';
import { FleetLocks } from './fleet-lock.ts';
import { FleetMetrics } from './fleet-metrics.ts';
import { PurgeStream } from './purge-stream.ts';
import { RedisLink } from './redis-link.ts';

export interface FleetDeps {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly now: () => number;
  /** Makes the entries read from the shared tier, as the memory tier's own. */
  readonly maker: EntryMaker;
  readonly purges: PurgeLog;
  /** The id this process's purges carry on the stream; processes of one group skip each other's. */
  readonly group: string | undefined;
  /** Applies another process's purge to this process's cache. */
  readonly applyPurge: (purge: Purge) => void;
}

export interface Fleet {
  /** The shared tier and the key locks, for the single flight. */
  readonly tier: SharedFill;
  /** Sends a purge this process has applied to every other process. */
  readonly publishPurge: PurgeFanOut;
  /** Why the shared tier is not in use now, for `/readyz`; undefined while it is. */
  downReason(): string | undefined;
  /** See CacheDeps.partitionMaxAgeMs (../steps/cached.ts). */
  partitionMaxAgeMs(): number | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** How long start-up waits for Redis before going on without it (it joins when Redis does). */
const CONNECT_WAIT_MS = 2000;

export function createFleet(config: Config, url: string, deps: FleetDeps): Fleet {
  const prefix = config['gateway.redis.keyPrefix'];
  const processId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // Read at scrape time, once the parts it asks exist.
  const metrics = new FleetMetrics(
    deps.registry,
    () => inUse(),
    () => partitioned(),
  );
  const link = new RedisLink({
    url,
    commandTimeoutMs: config['gateway.redis.commandTimeoutMs'],
    cooldownMs: config['gateway.redis.cooldownMs'],
    logger: deps.logger,
  });
  const stream = new PurgeStream({
    link,
    key: `${prefix}purges`,
    groupId: deps.group ?? processId,
    processId,
    log: deps.purges,
    limit: config['gateway.redis.purgeStreamLength'],
    apply: deps.applyPurge,
    metrics,
    logger: deps.logger,
    now: deps.now,
  });
  const locks = new FleetLocks({
    link,
    prefix,
    processId,
    lockMs: config['gateway.redis.lockMs'],
    waitMs: config['gateway.redis.fillWaitMs'],
    logger: deps.logger,
  });
  const inUse = (): boolean => link.up && stream.synced && locks.usable;
  const boundMs = config['gateway.redis.partitionBoundMs'];
  // Purges are heard through the stream only: an event this host receives itself covers the
  // origin's changes, not another host's purge API, so it does not lift the bound.
  const partitioned = (): boolean => deps.now() - stream.lastHeardAt > boundMs;
  const shared = new RedisStore(link, prefix, deps.purges, metrics, deps.now, deps.maker);
  const tier: SharedFill = {
    tier: 'redis',
    get usable() {
      return stream.synced && locks.usable;
    },
    async find(request, stored) {
      const response = await shared.get(request.key, request.requestHeaders);
      return response !== undefined && answersAsIs(response, request, stored, deps.now()) ? response : undefined;
    },
    lock: (key) => locks.acquire(key),
    waitFor: (key, remainingMs) => locks.waitFor(key, remainingMs),
    async write(key, response, stamp) {
      await shared.put(key, response, stamp);
    },
    counted: (role) => {
      metrics.fill(role);
    },
  };
  return {
    tier,
    async publishPurge(purge, generation) {
      await Promise.all([stream.publish(purge, generation), shared.purge(purge)]);
      return 0;
    },
    downReason: () => {
      if (inUse()) return undefined;
      const why = link.downReason ?? `the shared tier at ${link.url} is catching up on purges`;
      return partitioned() ? `${why}; the fleet's purges unread for over ${boundMs} ms: entries older than that are revalidated` : why;
    },
    partitionMaxAgeMs: () => (partitioned() ? boundMs : undefined),
    async start() {
      // The first requests should already share, so start-up waits (briefly) for the purge stream
      // to be read and the fill channel subscribed; a Redis that is not there is joined later.
      const deadline = Date.now() + CONNECT_WAIT_MS;
      await link.connect(CONNECT_WAIT_MS);
      stream.start();
      locks.start();
      while (link.up && !inUse() && Date.now() < deadline) await sleep(10);
    },
    async stop() {
      locks.stop();
      await stream.stop();
      link.close();
    },
  };
}
