/**
 * The fill as a member of a fleet (issue 10): before this process asks the origin for a key its
 * local cache cannot answer, it looks in the shared tier, and then takes part in the fleet's
 * single flight, so that a query is asked of the origin once however many processes want it at
 * once. A stale-while-revalidate refresh goes the same way, so it too is one per fleet. Whatever
 * the origin answers is stored by the Filler in the local cache and then written to the shared
 * tier before the key's lock is released, so a waiter woken by the release finds it.
 *
 * Whenever Redis is not usable this is exactly the Filler: the fleet can only ever save origin
 * calls, never turn a fault into a client error.
 */
import type { FleetMetrics } from '../fleet/fleet-metrics.ts';
import type { PurgeStream } from '../fleet/purge-stream.ts';
import { reuse } from '../rules/reuse.ts';
import { varyMatches } from '../rules/vary.ts';
import type { RedisStore } from '../store/redis-store.ts';
import type { ResponseCache } from '../store/response-cache.ts';
import type { StoredResponse } from '../store/stored-response.ts';
import type { Announce } from './coalescer.ts';
import type { Fill, FillOutcome, FillRequest } from './fill.ts';
import type { FleetFlight } from './fleet-flight.ts';

export interface FleetFillParts {
  readonly filler: Fill;
  readonly local: ResponseCache;
  readonly shared: RedisStore;
  readonly flight: FleetFlight;
  readonly purges: PurgeStream;
  readonly metrics: FleetMetrics;
  readonly now: () => number;
}

export class FleetFiller implements Fill {
  readonly #p: FleetFillParts;

  constructor(parts: FleetFillParts) {
    this.#p = parts;
  }

  async fill(request: FillRequest, stored: StoredResponse | undefined, announce?: Announce): Promise<FillOutcome> {
    const { purges, flight, metrics } = this.#p;
    // Without a complete view of the fleet's purges a shared entry cannot be judged, and without
    // notifications a wait could only time out: this process fills on its own meanwhile.
    if (!purges.synced || !flight.usable) {
      metrics.fill('alone');
      return this.#p.filler.fill(request, stored, announce);
    }
    const generation = this.#p.local.generation;
    const mark = purges.log.mark;
    const found = await this.#fromShared(request, stored, generation);
    if (found !== undefined) return found;
    const lock = await flight.acquire(request.key);
    if (lock === undefined) {
      metrics.fill('alone');
      return this.#p.filler.fill(request, stored, announce);
    }
    if (lock === 'taken') {
      const waiting = flight.waitFor(request.key);
      const meanwhile = await this.#fromShared(request, stored, generation);
      if (meanwhile !== undefined) {
        waiting.cancel();
        return meanwhile;
      }
      const arrived = await waiting.arrived;
      if (arrived) {
        const filled = await this.#fromShared(request, stored, generation);
        if (filled !== undefined) {
          metrics.fill('waited');
          return filled;
        }
      }
      // The holder's answer was not storable (so not shareable either), or it never came.
      metrics.fill(arrived ? 'waited' : 'timeout');
      return this.#fromOrigin(request, stored, announce, mark);
    }
    try {
      // Another process may have stored it between the first look and taking the lock.
      const raced = await this.#fromShared(request, stored, generation);
      if (raced !== undefined) return raced;
      metrics.fill('leader');
      return await this.#fromOrigin(request, stored, announce, mark);
    } finally {
      await lock.release();
    }
  }

  /**
   * A shared entry that may answer this request as it is: selected by it (§4.1), fresh for its
   * directives, and newer than the response this process already holds. It is copied into the
   * local cache, unless a local purge since `generation` names it.
   */
  async #fromShared(request: FillRequest, stored: StoredResponse | undefined, generation: number): Promise<FillOutcome | undefined> {
    const response = await this.#p.shared.read(request.key);
    if (response === undefined) return undefined;
    if (response.vary.length > 0 && !varyMatches(response.vary, response.selecting, request.requestHeaders)) return undefined;
    if (stored !== undefined && response.storedAt <= stored.storedAt) return undefined;
    if (reuse(response, request.directives, this.#p.now()) !== 'fresh') return undefined;
    this.#p.local.store(request.key, response, generation);
    return { kind: 'shared', response };
  }

  async #fromOrigin(request: FillRequest, stored: StoredResponse | undefined, announce: Announce | undefined, mark: string): Promise<FillOutcome> {
    const outcome = await this.#p.filler.fill(request, stored, announce);
    const kept = outcome.kind === 'response' ? (outcome.stored ? outcome.shared : undefined) : outcome.kind === 'revalidated' && outcome.stored ? outcome.response : undefined;
    if (kept !== undefined) await this.#p.shared.write(request.key, kept, mark);
    return outcome;
  }
}
