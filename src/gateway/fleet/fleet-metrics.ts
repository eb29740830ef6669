/**
 * The shared tier's metrics: whether it is in use, what its reads found, how fills were shared
 * across the fleet, and purges sent and received. Registered only when `gateway.redis.url` is set.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FillRole } from '../fill/fill-lock.ts';

/** `hit` a usable entry; `miss` none; `purged` one a later purge names; `error` Redis failed or was skipped. */
export type SharedRead = 'hit' | 'miss' | 'purged' | 'error';
export class FleetMetrics {
  readonly #reads: Counter<'result'>;
  readonly #writes: Counter<'result'>;
  readonly #fills: Counter<'role'>;
  readonly #purges: Counter<'direction'>;
  readonly #drops: Counter;

  constructor(registry: Registry, up: () => boolean, partitioned: () => boolean) {
    const registers = [registry];
    new Gauge({
      name: 'catalog_gateway_shared_tier_up',
      help: '1 while the shared cache tier (Redis) is in use; 0 while this process serves from its local cache alone.',
      registers,
      aggregator: 'min',
      collect() {
        this.set(up() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'catalog_gateway_fleet_partitioned',
      help: "1 while the fleet's purges have been unread for longer than gateway.redis.partitionBoundMs: entries older than the bound are revalidated instead of served fresh.",
      registers,
      aggregator: 'max',
      collect() {
        this.set(partitioned() ? 1 : 0);
      },
    });
    this.#reads = new Counter({
      name: 'catalog_gateway_shared_tier_reads_total',
      help: 'Reads of the shared tier after a local miss, by result (hit, miss, purged, error).',
      labelNames: ['result'],
      registers,
    });
    this.#writes = new Counter({
      name: 'catalog_gateway_shared_tier_writes_total',
      help: 'Entries written to the shared tier, by result (stored, error).',
      labelNames: ['result'],
      registers,
    });
    this.#fills = new Counter({
      name: 'catalog_gateway_fleet_fills_total',
      help: 'Fills for a key no process held, by role (leader, waited, lapsed: took over a lock whose holder was gone, timeout, alone).',
      labelNames: ['role'],
      registers,
    });
    this.#purges = new Counter({
      name: 'catalog_gateway_fleet_purges_total',
      help: 'Purges sent to, and received from, the other processes through the purge stream.',
      labelNames: ['direction'],
      registers,
    });
    this.#drops = new Counter({
      name: 'catalog_gateway_fleet_local_cache_drops_total',
      help: 'Times the local cache was emptied because purges were missed while Redis was unreachable.',
      registers,
    });
    for (const result of ['hit', 'miss', 'purged', 'error']) this.#reads.inc({ result }, 0);
    for (const result of ['stored', 'error']) this.#writes.inc({ result }, 0);
    for (const role of ['leader', 'waited', 'lapsed', 'timeout', 'alone']) this.#fills.inc({ role }, 0);
    for (const direction of ['sent', 'received']) this.#purges.inc({ direction }, 0);
  }

  read(result: SharedRead): void {
    this.#reads.inc({ result });
  }

  written(ok: boolean): void {
    this.#writes.inc({ result: ok ? 'stored' : 'error' });
  }

  fill(role: FillRole): void {
    this.#fills.inc({ role });
  }

  purgeSent(): void {
    this.#purges.inc({ direction: 'sent' });
  }

  purgeReceived(): void {
    this.#purges.inc({ direction: 'received' });
  }

  localCacheDropped(): void {
    this.#drops.inc();
  }
}
