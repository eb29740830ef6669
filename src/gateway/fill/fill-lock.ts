/**
 * The fill lock: what the single flight (flight.ts) needs of a place where several processes share
 * a cache and take turns at a key's fill, so that the origin is asked once however many of them
 * want the key. Two places keep it: the fleet's Redis (../fleet/fleet.ts, for every process of the
 * fleet) and the primary of a host's workers (../workers/host-fill.ts, for the workers sharing the
 * host's disk tier). Both lock a key with a lifetime its holder renews, so a holder that dies frees
 * it; both notify the waiters when it is let go; the waiting itself is one machine (LockWaits).
 */
import type { CacheKey } from '../store/memory/response-cache.ts';
import type { StoredResponse } from '../store/stored-response.ts';
import type { FillStamp } from '../store/tier.ts';
import { reuse } from '../rules/reuse.ts';
import type { FillRequest } from './fetch.ts';

/**
 * An attempt at a key's lock: `held` by this process until released, `taken` by another for
 * `remainingMs` more unless it renews it, `unknown` when the lock's keeper cannot say.
 */
export type FillLockAttempt =
  { readonly kind: 'held'; release(): Promise<void> } | { readonly kind: 'taken'; readonly remainingMs: number } | { readonly kind: 'unknown' };

/**
 * How a wait for another process's fill ended: `filled` its holder let go of the key; `lapsed`
 * the lock ran out without being let go (its holder is gone); `gone` the last-resort wait ran
 * out or the lock's keeper became unusable.
 */
export type FillWaitEnd = 'filled' | 'lapsed' | 'gone';

export interface FillWait {
  readonly ended: Promise<FillWaitEnd>;
  cancel(): void;
}

/**
 * How a fill took part in the shared single flight: `leader` this process held the lock and asked
 * the origin; `waited` another process's fill answered; `lapsed` the lock it waited on lapsed
 * unreleased and this process took the fill over; `timeout` the wait ran out and this process
 * asked itself; `alone` the lock's keeper was not in use and this process asked on its own.
 */
export type FillRole = 'leader' | 'waited' | 'lapsed' | 'timeout' | 'alone';

export interface SharedFill {
  /** Where a shared entry lives: one from the host's disk is only promoted to memory, one from Redis is kept in every local tier. */
  readonly tier: 'disk' | 'redis';
  /** Whether shared entries can be judged and waits end by notification now. */
  readonly usable: boolean;
  /** A shared entry that answers `request` as it is (selected by it, fresh for its directives, newer than `stored`). */
  find(request: FillRequest, stored: StoredResponse | undefined): Promise<StoredResponse | undefined>;
  lock(key: CacheKey): Promise<FillLockAttempt>;
  /** Starts waiting for the key's holder, whose lock has `remainingMs` left; call before looking once more. */
  waitFor(key: CacheKey, remainingMs: number): FillWait;
  /** Makes what a fill stored findable by every other process, with where its fill began; resolves once it is. */
  write(key: CacheKey, response: StoredResponse, stamp: FillStamp): Promise<void>;
  counted(role: FillRole): void;
}

/** Whether a shared entry answers `request` as it is: fresh for its directives, and newer than what this process had. */
export function answersAsIs(response: StoredResponse, request: FillRequest, stored: StoredResponse | undefined, now: number): boolean {
  if (stored !== undefined && response.storedAt <= stored.storedAt) return false;
  return reuse(response, request.directives, now) === 'fresh';
}

/** A waiter looks at a lock again this long after its remaining life: one round trip. */
const LAPSE_GRACE_MS = 10;

/**
 * The waits of one process on the locks other processes hold. A wait ends when the holder's
 * release is heard (`settle`), when the lock lapsed unreleased (looked at again once its remaining
 * life is over, and again for as long as it is renewed), or at `waitMs`, the last resort.
 */
export class LockWaits {
  readonly #waiters = new Map<CacheKey, Set<(end: FillWaitEnd) => void>>();
  /** The time a key's lock has left: 0 or less when there is none, undefined when its keeper cannot say. */
  readonly #lookAgain: (key: CacheKey) => Promise<number | undefined>;
  readonly #waitMs: number;

  constructor(lookAgain: (key: CacheKey) => Promise<number | undefined>, waitMs: number) {
    this.#lookAgain = lookAgain;
    this.#waitMs = waitMs;
  }

  waitFor(key: CacheKey, remainingMs: number): FillWait {
    let settle: (end: FillWaitEnd) => void = () => undefined;
    const ended = new Promise<FillWaitEnd>((resolve) => {
      settle = resolve;
    });
    let waiters = this.#waiters.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      this.#waiters.set(key, waiters);
    }
    const set = waiters;
    const giveUpAt = Date.now() + this.#waitMs;
    let timer: NodeJS.Timeout | undefined;
    let over = false;
    const done = (end: FillWaitEnd): void => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && this.#waiters.get(key) === set) this.#waiters.delete(key);
      settle(end);
    };
    const lookAgainIn = (ms: number): void => {
      const left = giveUpAt - Date.now();
      timer = setTimeout(
        () => {
          if (ms + LAPSE_GRACE_MS >= left) done('gone');
          else
            void this.#lookAgain(key).then((lockMs) => {
              if (lockMs === undefined) done('gone');
              else if (lockMs <= 0) done('lapsed');
              else lookAgainIn(lockMs);
            });
        },
        Math.max(0, Math.min(ms + LAPSE_GRACE_MS, left)),
      );
    };
    set.add(done);
    lookAgainIn(remainingMs);
    return {
      ended,
      cancel: () => {
        done('gone');
      },
    };
  }

  /** Ends every wait on `key` with `end`. */
  settle(key: CacheKey, end: FillWaitEnd): void {
    const waiters = this.#waiters.get(key);
    if (waiters === undefined) return;
    for (const done of [...waiters]) done(end);
  }

  /** The keeper became unusable: every wait ends, and each waiter fills on its own. */
  settleAll(): void {
    for (const key of [...this.#waiters.keys()]) this.settle(key, 'gone');
  }
}
