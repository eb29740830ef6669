/**
 * The fleet's key locks, in Redis, for the single flight (../fill/flight.ts): for a key no process
 * holds, one process (the one that takes the key's lock) asks the origin, and the others wait
 * until it has stored the answer.
 * The lock expires after `lockMs` unless its holder renews it, so a holder that dies frees the key;
 * its release is followed by a notification on one channel, which a waiter has subscribed to
 * before it looks for the entry once more, so no notification falls between the look and the
 * wait.
 *
 * A wait is bounded by the lock, not by a fixed timer (../fill/fill-lock.ts, LockWaits): the
 * waiter looks at the lock again when its remaining life is over, and as soon as it has lapsed
 * unreleased (its holder is gone, or stopped renewing it) the waiter takes the fill over. `waitMs`
 * is only the last resort, and a wait also ends as soon as Redis stops being usable.
 *
 * A lock is taken by a script that Redis refuses to run after the taker's deadline (Redis's clock
 * against the one the taker read, so hosts must keep their clocks within the command timeout of
 * Redis's, as NTP does): a `SET … NX` that reaches Redis after its taker gave up on it, and so
 * would hold a key for nobody, never takes effect. The connection reset on a timeout
 * (redis-link.ts) keeps such commands off the wire as well; the fence holds where the reset cannot,
 * for bytes that reached Redis's socket but wait behind a slow command.
 */
import type { Logger } from 'pino';
import { LockWaits, type FillLockAttempt, type FillWait } from '../fill/fill-lock.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import type { RedisClient, RedisLink } from './redis-link.ts';

export interface FleetLocksOptions {
  readonly link: RedisLink;
  readonly prefix: string;
  readonly processId: string;
  readonly lockMs: number;
  readonly waitMs: number;
  readonly logger: Logger;
}

/**
 * Takes the lock unless Redis's clock is past the taker's deadline (ARGV[3], ms since the epoch):
 * `{1}` taken, `{0, pttl}` held by another, `{-1}` too late.
 */
const ACQUIRE = `local t = redis.call('time')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[3]) then return {-1} end
if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return {1} end
return {0, redis.call('pttl', KEYS[1])}`;

/** Renews only the holder's own lock: a lock that expired and was taken by another is left alone. */
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export class FleetLocks {
  readonly #o: FleetLocksOptions;
  readonly #lockPrefix: string;
  readonly #channel: string;
  readonly #waits: LockWaits;
  #subscriber: RedisClient | undefined;
  #subscribed = false;
  #sequence = 0;
  #skewReported = false;

  constructor(options: FleetLocksOptions) {
    this.#o = options;
    this.#lockPrefix = `${options.prefix}lock:`;
    this.#channel = `${options.prefix}filled`;
    this.#waits = new LockWaits((key) => this.#o.link.run((c) => c.pttl(this.#lockPrefix + key)), options.waitMs);
    options.link.onChange((up) => {
      if (!up) this.#waits.settleAll();
    });
  }

  start(): void {
    const subscriber = this.#o.link.dedicated('fills');
    this.#subscriber = subscriber;
    subscriber.on('message', (_channel: string, key: string) => {
      this.#waits.settle(key as CacheKey, 'filled');
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
      this.#waits.settleAll();
    });
  }

  /** Whether a wait can end by notification; without it, waiting would only ever time out. */
  get usable(): boolean {
    return this.#subscribed && this.#o.link.up;
  }

  /** The key's lock, or how long another process's lock on it has left, or `unknown` when Redis cannot say. */
  async acquire(key: CacheKey): Promise<FillLockAttempt> {
    const lockKey = this.#lockPrefix + key;
    const token = `${this.#o.processId}:${++this.#sequence}`;
    const deadline = Date.now() + this.#o.link.commandTimeoutMs;
    const reply = await this.#o.link.run((c) => c.eval(ACQUIRE, 1, lockKey, token, this.#o.lockMs, deadline));
    const [status, remainingMs] = Array.isArray(reply) ? (reply as number[]) : [];
    if (status === 0) return { kind: 'taken', remainingMs: remainingMs ?? this.#o.lockMs };
    if (status !== 1) {
      // Refused as late although the answer came in time: Redis's clock is ahead of this host's.
      if (status === -1 && !this.#skewReported) {
        this.#skewReported = true;
        this.#o.logger.warn(
          { commandTimeoutMs: this.#o.link.commandTimeoutMs },
          "Redis's clock is ahead of this host's by more than the command timeout: fills go without the fleet's lock",
        );
      }
      return { kind: 'unknown' };
    }
    const renewal = setInterval(
      () => {
        void this.#o.link.run((c) => c.eval(RENEW, 1, lockKey, token, this.#o.lockMs));
      },
      Math.max(50, Math.floor(this.#o.lockMs / 3)),
    );
    renewal.unref();
    return {
      kind: 'held',
      release: async () => {
        clearInterval(renewal);
        await this.#o.link.run((c) => c.eval(RELEASE, 1, lockKey, token));
        await this.#o.link.run((c) => c.publish(this.#channel, key));
      },
    };
  }

  /**
   * Starts waiting for `key`'s fill, whose lock has `remainingMs` left; call before looking for
   * the entry once more.
   */
  waitFor(key: CacheKey, remainingMs: number): FillWait {
    return this.#waits.waitFor(key, remainingMs);
  }

  stop(): void {
    this.#waits.settleAll();
    this.#subscriber?.disconnect();
  }
}
