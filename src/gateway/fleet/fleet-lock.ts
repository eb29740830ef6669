/**
 * The fleet's key locks, in Redis, for the single flight (../fill/flight.ts): for a key no process
 * holds, one process (the one that takes the key's lock) asks the origin, and the others wait
 * until it has stored the answer.
 * The lock expires after `lockMs` unless its holder renews it, so a holder that dies frees the key;
 * its release is followed by a notification on one channel, which a waiter has subscribed to
 * before it looks for the entry once more, so no notification falls between the look and the
 * wait. A wait ends at the notification, after `waitMs`, or as soon as Redis stops being usable;
 * a waiter whose wait ran out asks the origin itself.
 */
import type { Logger } from 'pino';
import type { FleetKeyLock, FleetWait } from '../fill/flight.ts';
import type { CacheKey } from '../store/response-cache.ts';
import type { RedisClient, RedisLink } from './redis-link.ts';

export interface FleetLocksOptions {
  readonly link: RedisLink;
  readonly prefix: string;
  readonly processId: string;
  readonly lockMs: number;
  readonly waitMs: number;
  readonly logger: Logger;
}

/** Renews only the holder's own lock: a lock that expired and was taken by another is left alone. */
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export class FleetLocks {
  readonly #o: FleetLocksOptions;
  readonly #lockPrefix: string;
  readonly #channel: string;
  readonly #waiters = new Map<string, Set<(arrived: boolean) => void>>();
  #subscriber: RedisClient | undefined;
  #subscribed = false;
  #sequence = 0;

  constructor(options: FleetLocksOptions) {
    this.#o = options;
    this.#lockPrefix = `${options.prefix}lock:`;
    this.#channel = `${options.prefix}filled`;
    options.link.onChange((up) => {
      if (!up) this.#releaseAll();
    });
  }

  start(): void {
    const subscriber = this.#o.link.dedicated('fills');
    this.#subscriber = subscriber;
    subscriber.on('message', (_channel: string, key: string) => {
      this.#settle(key, true);
    });
    subscriber.on('ready', () => {
      subscriber.subscribe(this.#channel).then(
        () => {
          this.#subscribed = true;
        },
        (err: unknown) => {
          this.#o.logger.warn({ err }, 'subscribing to fill notifications failed');
        },
      );
    });
    subscriber.on('close', () => {
      this.#subscribed = false;
      this.#releaseAll();
    });
  }

  /** Whether a wait can end by notification; without it, waiting would only ever time out. */
  get usable(): boolean {
    return this.#subscribed && this.#o.link.up;
  }

  /** The key's lock, `taken` when another process holds it, undefined when Redis cannot say. */
  async acquire(key: CacheKey): Promise<FleetKeyLock | 'taken' | undefined> {
    const lockKey = this.#lockPrefix + key;
    const token = `${this.#o.processId}:${++this.#sequence}`;
    const set = await this.#o.link.run((c) => c.set(lockKey, token, 'PX', this.#o.lockMs, 'NX'));
    if (set === undefined) return undefined;
    if (set === null) return 'taken';
    const renewal = setInterval(() => {
      void this.#o.link.run((c) => c.eval(RENEW, 1, lockKey, token, this.#o.lockMs));
    }, Math.max(50, Math.floor(this.#o.lockMs / 3)));
    renewal.unref();
    return {
      release: async () => {
        clearInterval(renewal);
        await this.#o.link.run((c) => c.eval(RELEASE, 1, lockKey, token));
        await this.#o.link.run((c) => c.publish(this.#channel, key));
      },
    };
  }

  /** Starts waiting for `key`'s fill; call before looking for the entry once more. */
  waitFor(key: CacheKey): FleetWait {
    let settle: (arrived: boolean) => void = () => undefined;
    const arrived = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    let waiters = this.#waiters.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      this.#waiters.set(key, waiters);
    }
    const set = waiters;
    const timer = setTimeout(() => {
      done(false);
    }, this.#o.waitMs);
    const done = (value: boolean): void => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && this.#waiters.get(key) === set) this.#waiters.delete(key);
      settle(value);
    };
    set.add(done);
    return {
      arrived,
      cancel: () => {
        done(false);
      },
    };
  }

  #settle(key: string, arrived: boolean): void {
    const waiters = this.#waiters.get(key);
    if (waiters === undefined) return;
    for (const done of [...waiters]) done(arrived);
  }

  #releaseAll(): void {
    for (const key of [...this.#waiters.keys()]) this.#settle(key, false);
  }

  stop(): void {
    this.#releaseAll();
    this.#subscriber?.disconnect();
  }
}
