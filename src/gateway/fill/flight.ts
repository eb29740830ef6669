/**
 * Single flight (Varnish's waiting list and hit-for-miss; undici's dedupe): one object per key
 * owns the key's fill from the first miss to the last waiter. Its leader looks in the cache the
 * process shares with others and takes the key's fill lock there (fill-lock.ts) — the fleet's,
 * when there is a fleet and Redis is usable, else the host's when this is one of a host's workers
 * — so a query is asked of the origin once however many processes want it; fetches from the
 * origin (fetch.ts); and makes what the origin answered findable by the others before the lock is
 * let go, so a waiter woken by the release finds it. A process alone on its cache takes no lock.
 * Who else the answer may serve is decided once (sharing.ts); waiters it does not serve are
 * released as soon as that is known, to ask on their own.
 *
 * The flight is the one writer of fills: what the rules let be stored, from the origin or from the
 * fleet's tier, it keeps in the process's tiers (../store/tiers.ts), judged by the purges made
 * since the fill began.
 *
 * A flight belongs to no client: a client that goes away cancels nothing for the others. A purge
 * detaches every flight in flight, so a request after it starts its own.
 */
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../metrics.ts';
import type { PurgeCause, PurgeTaker } from '../purge/purger.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import type { StoredResponse } from '../store/stored-response.ts';
import type { FillStamp } from '../store/tier.ts';
import type { Tiers } from '../store/tiers.ts';
import type { Fetcher, FillOutcome, FillRequest } from './fetch.ts';
import type { FillLockAttempt, FillRole, SharedFill } from './fill-lock.ts';
import { admits, sharingOfOutcome, type Sharing } from './sharing.ts';

/** What one request got from a flight. */
export interface Flown {
  readonly outcome: FillOutcome;
  /** This request waited for another request's fill (RFC 9211 `collapsed`). */
  readonly collapsed: boolean;
}

export interface FlightParts {
  readonly fetcher: Fetcher;
  /** Where fills are kept. */
  readonly tiers: Tiers;
  /** Where a retired response is forgotten: the Purger, which lets go of these very flights. */
  readonly purger: PurgeTaker;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** The fleet's shared tier and locks, when there is a fleet. */
  readonly fleet: SharedFill | undefined;
  /** The host's fill locks, when this is one of the workers sharing the host's disk tier. */
  readonly host: SharedFill | undefined;
}

class Flight {
  readonly sharing: Promise<Sharing>;
  readonly outcome: Promise<FillOutcome>;

  constructor(run: (announce: (sharing: Sharing) => void) => Promise<FillOutcome>, done: (flight: Flight) => void) {
    let decide: (sharing: Sharing) => void = () => undefined;
    this.sharing = new Promise<Sharing>((resolve) => {
      decide = resolve;
    });
    this.outcome = run((sharing) => {
      decide(sharing);
      if (sharing.kind === 'none') done(this);
    }).then(
      (outcome) => {
        decide(sharingOfOutcome(outcome));
        done(this);
        return outcome;
      },
      (err: unknown) => {
        decide({ kind: 'none' });
        done(this);
        throw err;
      },
    );
  }
}

const SILENT = (): void => undefined;
const RETIRED: PurgeCause = { kind: 'retired' };

export class Flights {
  readonly #p: FlightParts;
  readonly #inFlight = new Map<CacheKey, Flight>();
  #waiting = 0;

  constructor(parts: FlightParts) {
    this.#p = parts;
  }

  /** The answer to a request that needs the origin: a flight of its own, or a share of the one in flight. */
  async answer(request: FillRequest, stored: StoredResponse | undefined): Promise<Flown> {
    const running = this.#inFlight.get(request.key);
    if (running === undefined) return { outcome: await this.#start(request, stored).outcome, collapsed: false };
    this.#waiting++;
    try {
      if (admits(await running.sharing, request.requestHeaders)) return { outcome: await running.outcome, collapsed: true };
    } finally {
      this.#waiting--;
    }
    return { outcome: await this.#lead(request, stored, SILENT), collapsed: false };
  }

  /** RFC 5861 §3: one background refresh per key, shared with any flight already under way; nobody waits for it. */
  refresh(request: FillRequest, stored: StoredResponse, reqId: string): void {
    if (this.#inFlight.has(request.key)) return;
    this.#start(request, stored).outcome.catch((err: unknown) => {
      this.#p.logger.error({ reqId, err }, 'background refresh failed');
    });
  }

  /** Lets every flight go on for the requests already waiting on it; the next request for its key starts its own. */
  detachAll(): void {
    this.#inFlight.clear();
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Requests waiting on a flight another request leads, until it answers them or sends them away. */
  get waiting(): number {
    return this.#waiting;
  }

  #start(request: FillRequest, stored: StoredResponse | undefined): Flight {
    const { key } = request;
    const flight = new Flight(
      (announce) => this.#lead(request, stored, announce),
      (done) => {
        if (this.#inFlight.get(key) === done) this.#inFlight.delete(key);
      },
    );
    this.#inFlight.set(key, flight);
    return flight;
  }

  /**
   * The leader's part: the fleet's lock when it is usable, else the host's, else the origin alone.
   * Without a complete view of the fleet's purges a shared entry cannot be judged, and without
   * notifications a wait could only time out: this process fills on its own meanwhile (or under
   * the host's lock, which needs neither).
   */
  async #lead(request: FillRequest, stored: StoredResponse | undefined, announce: (sharing: Sharing) => void): Promise<FillOutcome> {
    const { fleet, host } = this.#p;
    if (fleet !== undefined && !fleet.usable) fleet.counted('alone');
    const shared = fleet?.usable === true ? fleet : host;
    if (shared === undefined || !shared.usable) {
      shared?.counted('alone');
      return this.#fetch(request, stored, announce);
    }
    const stamp = this.#p.tiers.stamp();
    const look = async (): Promise<FillOutcome | undefined> => {
      const response = await shared.find(request, stored);
      if (response === undefined) return undefined;
      this.#adopt(request.key, response, shared, stamp);
      return { kind: 'shared', response, tier: shared.tier };
    };
    const fromOrigin = async (): Promise<FillOutcome> => {
      const outcome = await this.#fetch(request, stored, announce);
      const kept = keptOf(outcome);
      if (kept !== undefined) await shared.write(request.key, kept, stamp);
      return outcome;
    };
    const found = await look();
    if (found !== undefined) return found;
    const lead = async (lock: FillLockAttempt & { kind: 'held' }, role: FillRole): Promise<FillOutcome> => {
      try {
        // Another process may have stored it between the first look and taking the lock.
        const raced = await look();
        if (raced !== undefined) return raced;
        shared.counted(role);
        return await fromOrigin();
      } finally {
        await lock.release();
      }
    };
    const lock = await shared.lock(request.key);
    if (lock.kind === 'held') return lead(lock, 'leader');
    if (lock.kind === 'unknown') {
      shared.counted('alone');
      return this.#fetch(request, stored, announce);
    }
    const waiting = shared.waitFor(request.key, lock.remainingMs);
    const meanwhile = await look();
    if (meanwhile !== undefined) {
      waiting.cancel();
      return meanwhile;
    }
    const end = await waiting.ended;
    if (end === 'filled') {
      const filled = await look();
      shared.counted('waited');
      // Without an entry, the holder's answer was not storable (so not shareable either).
      return filled ?? fromOrigin();
    }
    if (end === 'lapsed') {
      // Its holder is gone: this process takes the fill over, under the lock when it can get it.
      const again = await shared.lock(request.key);
      if (again.kind === 'held') return lead(again, 'lapsed');
    }
    shared.counted('timeout');
    return fromOrigin();
  }

  /**
   * Keeps an entry another process's fill stored, judged by the purges since this fill began: one
   * from the host's disk tier goes to memory only (the disk has it), one from the fleet's tier to
   * every local tier.
   */
  #adopt(key: CacheKey, response: StoredResponse, from: SharedFill, stamp: FillStamp): void {
    if (from.tier === 'disk') this.#p.tiers.promote(key, response, stamp);
    else this.#p.tiers.keep(key, response, stamp);
  }

  /**
   * The origin exchange. A stored response it retired is forgotten as a hard purge of its target:
   * every copy is the old answer, whichever process holds it, and only a purge reaches them all
   * (this host's other workers, the fleet's other processes through the purge stream, the shared
   * tier by a DEL). It is taken before anyone hears the outcome or the fleet's lock is let go, and
   * resolves once the other workers have applied it and Redis has the DEL and the stream entry.
   * The local drop and the DEL go out in one turn of the event loop, so the DEL reaches Redis, on
   * the one connection to the key's node, ahead of every read of the key this process makes after
   * the drop.
   *
   * The purge lets go of the fills in flight, this one included when it is still among them, which
   * costs its waiters nothing: they hold it and get its answer; only a later request starts a fill
   * of its own. It has mostly left already: an answer that retires the stored one cannot be shared,
   * so its head announced `none` and released the waiters to ask on their own.
   */
  async #fetch(request: FillRequest, stored: StoredResponse | undefined, announce: (sharing: Sharing) => void): Promise<FillOutcome> {
    const stamp = this.#p.tiers.stamp();
    const outcome = this.#keep(request.key, await this.#p.fetcher.fetch(request, stored, announce), stored, stamp);
    if ((outcome.kind === 'response' || outcome.kind === 'revalidated') && outcome.retired)
      await this.#p.purger.purge({ kind: 'urls', keys: [request.key] }, false, RETIRED);
    return outcome;
  }

  /**
   * Where fills from the origin are written: keeps in the local tiers what the rules let be stored
   * — an origin's answer, a 304's freshened response — and says in the outcome whether the tiers
   * kept it. An entry from another process's fill is kept by #adopt.
   */
  #keep(key: CacheKey, outcome: FillOutcome, stored: StoredResponse | undefined, stamp: FillStamp): FillOutcome {
    const { tiers } = this.#p;
    switch (outcome.kind) {
      case 'revalidated':
        if (outcome.stored && stored !== undefined) tiers.replace(key, stored, outcome.shared, stamp);
        return outcome;
      case 'response': {
        if (!outcome.stored) return outcome;
        const notKept = tiers.keep(key, outcome.shared, stamp);
        return notKept === undefined ? outcome : { ...outcome, stored: false, notStored: notKept };
      }
      default:
        return outcome;
    }
  }
}

/** What a fill stored locally, and so may hand to the shared tier. */
function keptOf(outcome: FillOutcome): StoredResponse | undefined {
  if (outcome.kind === 'response') return outcome.stored ? outcome.shared : undefined;
  return outcome.kind === 'revalidated' && outcome.stored ? outcome.shared : undefined;
}
