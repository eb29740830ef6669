/**
 * The host's fill locks, kept by the primary for its workers, which share the host's disk tier
 * (host-fill.ts is a worker's side): for a key no worker is filling, the worker that takes the
 * key's lock asks the origin, and the others wait until it has committed the answer to disk.
 *
 * The primary is where the workers' locks belong: it is the one process that outlives them, hears
 * at once of a worker's death (cluster's `exit`, upon which the dead worker's locks lapse and its
 * waiters take the fill over), and can notify the waiters, which a lock row in the disk tier's
 * database could not (its waiters would have to poll). It is also the cheaper: a lock's round trip
 * over IPC costs the asking worker about 10 µs of CPU, where a lock row taken and let go costs
 * two write transactions, 31 µs of CPU and 120 µs of wall time. A lock also lapses after
 * `lockMs` unless its holder renews it, so a worker that hangs rather than dies frees its keys
 * too. A worker alone on its disk tier (no primary) takes no lock at all.
 */
import { typeOf } from './messages.ts';

/**
 * A lock's life unless renewed (every third of it while its fill runs): the longest a worker waits
 * on one whose holder hangs. A holder that dies frees its keys at once.
 */
export const HOST_LOCK_MS = 1000;

/** Worker → primary: take `key`'s fill lock (`take`, numbered `token` by the worker), or say how long it has left (`left`). */
export interface LockQuestion {
  readonly type: 'catalog-gateway:fill-lock';
  readonly op: 'take' | 'left';
  readonly key: string;
  readonly token: number;
}

/**
 * Primary → worker, by the question's id: for `take`, 0 when the asker now holds the lock, else
 * the ms another worker's lock has left; for `left`, the ms left, 0 when there is none.
 */
export interface LockAnswer {
  readonly type: 'catalog-gateway:fill-lock-answer';
  readonly id: number;
  readonly ms: number;
}

/** Worker → primary, unanswered: renew or let go of the lock its `take` numbered `token` got. */
export interface LockHolding {
  readonly type: 'catalog-gateway:fill-lock-held';
  readonly op: 'renew' | 'release';
  readonly key: string;
  readonly token: number;
}

/** Primary → the workers waiting on `key`: its holder let go (`filled`), or died (`lapsed`). */
export interface LockEnd {
  readonly type: 'catalog-gateway:fill-lock-end';
  readonly key: string;
  readonly end: 'filled' | 'lapsed';
}

export function isLockAnswer(message: unknown): message is LockAnswer {
  return typeOf(message) === 'catalog-gateway:fill-lock-answer';
}

export function isLockEnd(message: unknown): message is LockEnd {
  return typeOf(message) === 'catalog-gateway:fill-lock-end';
}

/** A worker, as the locks see it. */
export interface LockPeer {
  send(message: LockAnswer | LockEnd): unknown;
  isConnected(): boolean;
}

interface Held {
  readonly owner: LockPeer;
  readonly token: number;
  expiresAt: number;
  /** Workers told the lock was taken, to be told when it ends. */
  readonly waiters: Set<LockPeer>;
}

export class HostLocks {
  readonly #lockMs: number;
  readonly #held = new Map<string, Held>();
  readonly #sweep: NodeJS.Timeout;

  constructor(lockMs: number) {
    this.#lockMs = lockMs;
    // A lock that lapsed and was never asked for again would be kept for good.
    this.#sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, held] of this.#held) if (held.expiresAt <= now) this.#end(key, held, 'lapsed');
    }, lockMs);
    this.#sweep.unref();
  }

  stop(): void {
    clearInterval(this.#sweep);
  }

  /** Acts on a worker's lock message; false for any other message. */
  heard(from: LockPeer, message: unknown): boolean {
    const type = typeOf(message);
    if (type === 'catalog-gateway:fill-lock') {
      const { op, key, token, id } = message as LockQuestion & { readonly id: number };
      send(from, { type: 'catalog-gateway:fill-lock-answer', id, ms: op === 'take' ? this.#take(from, key, token) : this.#left(key) });
      return true;
    }
    if (type !== 'catalog-gateway:fill-lock-held') return false;
    const { op, key, token } = message as LockHolding;
    const held = this.#held.get(key);
    if (held?.owner !== from || held.token !== token) return true;
    if (op === 'renew') held.expiresAt = Date.now() + this.#lockMs;
    else this.#end(key, held, 'filled');
    return true;
  }

  /** A worker exited: the locks it held lapse at once, and their waiters take the fills over. */
  gone(worker: LockPeer): void {
    for (const [key, held] of this.#held) {
      held.waiters.delete(worker);
      if (held.owner === worker) this.#end(key, held, 'lapsed');
    }
  }

  get size(): number {
    return this.#held.size;
  }

  #take(from: LockPeer, key: string, token: number): number {
    const now = Date.now();
    const held = this.#held.get(key);
    const left = held === undefined ? 0 : held.expiresAt - now;
    if (held !== undefined && left > 0) {
      // The holder too, when another of its requests could not share its fill (told when it ends).
      held.waiters.add(from);
      return left;
    }
    // A lapsed lock's waiters wait on its new holder: they are told when it lets go.
    this.#held.set(key, { owner: from, token, expiresAt: now + this.#lockMs, waiters: held?.waiters ?? new Set() });
    return 0;
  }

  #left(key: string): number {
    const held = this.#held.get(key);
    return held === undefined ? 0 : Math.max(0, held.expiresAt - Date.now());
  }

  #end(key: string, held: Held, end: LockEnd['end']): void {
    this.#held.delete(key);
    for (const waiter of held.waiters) send(waiter, { type: 'catalog-gateway:fill-lock-end', key, end });
  }
}

function send(to: LockPeer, message: LockAnswer | LockEnd): void {
  if (to.isConnected()) to.send(message);
}
