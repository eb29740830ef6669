/**
 * The fleet's parts for one process, made when `gateway.redis.url` is set: the link to Redis,
 * the purge stream, the shared tier and the fleet-wide single flight, and the filler that puts
 * them in front of this process's own. The gateway sees only what this returns.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import type { Fill } from '../fill/fill.ts';
import { FleetFiller } from '../fill/fleet-fill.ts';
import { FleetFlight } from '../fill/fleet-flight.ts';
import type { PurgeFanOut } from '../purge/purger.ts';
import type { PurgeSelector } from '../store/purge-log.ts';
import { RedisStore } from '../store/redis-store.ts';
import type { ResponseCache } from '../store/response-cache.ts';
import { FleetMetrics } from './fleet-metrics.ts';
import { PurgeStream } from './purge-stream.ts';
import { RedisLink } from './redis-link.ts';

export interface FleetDeps {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly now: () => number;
  readonly cache: ResponseCache;
  /** The id this process's purges carry on the stream; processes of one group skip each other's. */
  readonly group: string | undefined;
  /** Applies another process's purge to this process's cache. */
  readonly applyPurge: (selector: PurgeSelector, soft: boolean) => void;
}

export interface Fleet {
  /** `local` with the shared tier and the fleet's single flight in front of its origin calls. */
  filler(local: Fill): Fill;
  /** Sends a purge this process has applied to every other process. */
  readonly publishPurge: PurgeFanOut;
  /** Why the shared tier is not in use now, for `/readyz`; undefined while it is. */
  downReason(): string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** How long start-up waits for Redis before going on without it (it joins when Redis does). */
const CONNECT_WAIT_MS = 2000;

export function createFleet(config: Config, url: string, deps: FleetDeps): Fleet {
  const prefix = config['gateway.redis.keyPrefix'];
  const processId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // Read at scrape time, once the parts it asks exist.
  const metrics = new FleetMetrics(deps.registry, () => inUse());
  const link = new RedisLink({ url, commandTimeoutMs: config['gateway.redis.commandTimeoutMs'], cooldownMs: config['gateway.redis.cooldownMs'], logger: deps.logger });
  const purges = new PurgeStream({
    link,
    key: `${prefix}purges`,
    processId: deps.group ?? processId,
    limit: config['gateway.redis.purgeStreamLength'],
    apply: deps.applyPurge,
    metrics,
    logger: deps.logger,
    now: deps.now,
  });
  const flight = new FleetFlight({ link, prefix, processId, lockMs: config['gateway.redis.lockMs'], waitMs: config['gateway.redis.fillWaitMs'], logger: deps.logger });
  const inUse = (): boolean => link.up && purges.synced && flight.usable;
  const shared = new RedisStore(link, prefix, purges.log, metrics, deps.now);
  return {
    filler: (local) => new FleetFiller({ filler: local, local: deps.cache, shared, flight, purges, metrics, now: deps.now }),
    publishPurge: (selector, soft) => {
      purges.publish(selector, soft);
    },
    downReason: () => {
      if (inUse()) return undefined;
      return link.downReason ?? `the shared tier at ${link.url} is catching up on purges`;
    },
    async start() {
      // The first requests should already share, so start-up waits (briefly) for the purge stream
      // to be read and the fill channel subscribed; a Redis that is not there is joined later.
      const deadline = Date.now() + CONNECT_WAIT_MS;
      await link.connect(CONNECT_WAIT_MS);
      purges.start();
      flight.start();
      while (link.up && !inUse() && Date.now() < deadline) await sleep(10);
    },
    async stop() {
      flight.stop();
      await purges.stop();
      await link.close();
    },
  };
}
