/**
 * The gateway's one way to Redis: an ioredis client (standalone, Cluster or Sentinel, from
 * `gateway.redis.url`) that fails fast instead of queueing, with a circuit breaker in front.
 * Redis is an accelerator for the fleet, never a dependency of an answer: every operation is
 * bounded by `gateway.redis.commandTimeoutMs`, an operation that fails yields `undefined`, and
 * after a few failures in a row the breaker stays open for `gateway.redis.cooldownMs`, so a slow
 * or dead Redis costs a request nothing but a branch.
 *
 * An operation that runs out of time on a connection that has gone silent (nothing came back
 * for that long) resets it (a TCP RST, not a FIN): ioredis's own `commandTimeout` only rejects the promise and leaves the command in the socket, where the
 * kernel keeps retransmitting it through a partition and Redis runs it whenever the link heals
 * (issue 31: a lock taken 13 s after its taker gave up). A reset socket is gone from the kernel,
 * so nothing written on it arrives later; with `maxRetriesPerRequest: 0` ioredis rejects what was
 * queued on it instead of resending it on the next connection (event_handler.js, closeHandler).
 * On a connection that is only slow, a command given up on still runs, late; the one for which
 * that would matter, taking a lock, is fenced (fleet-lock.ts), and docs/fleet.md says why the
 * others are harmless.
 * The reset also replaces a connection a partition left silent at once, instead of after TCP's
 * retransmission backoff: short connect attempts and reconnection delays then bring the process
 * back within about a second of the heal.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { parseRedisUrl, withoutPasswords, type RedisTarget } from '../../config/redis-url.ts';

export type RedisClient = Redis | Cluster;

export interface RedisLinkOptions {
  readonly url: string;
  readonly commandTimeoutMs: number;
  readonly cooldownMs: number;
  readonly logger: Logger;
}

/** Failures in a row that open the breaker. */
const FAILURES_TO_OPEN = 3;
/**
 * Reconnection backoff ceiling: short, so sharing resumes soon after Redis is back; with the
 * connect deadline it bounds the time from a heal to a connection (a SYN lost just before the heal
 * costs one connect deadline, then at most this).
 */
const MAX_RECONNECT_DELAY_MS = 250;
/** One connection attempt's deadline: below the kernel's first SYN retransmission (1 s). */
const CONNECT_TIMEOUT_MS = 900;
/** TCP keepalive's idle time, so an idle connection across a partition is probed too. */
const KEEPALIVE_MS = 1000;

function reconnectDelay(times: number): number {
  return Math.min(25 * 2 ** Math.min(times, 10), MAX_RECONNECT_DELAY_MS);
}

function createClient(target: RedisTarget, name: string): RedisClient {
  const common = {
    username: target.username,
    password: target.password,
    connectionName: name,
    connectTimeout: CONNECT_TIMEOUT_MS,
    keepAlive: KEEPALIVE_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
    retryStrategy: reconnectDelay,
    lazyConnect: true,
  } satisfies RedisOptions;
  switch (target.kind) {
    case 'standalone':
      return new Redis({ ...common, host: target.node.host, port: target.node.port, db: target.db, ...(target.tls ? { tls: {} } : {}) });
    case 'sentinel':
      return new Redis({
        ...common,
        sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
        name: target.master,
        db: target.db,
        sentinelRetryStrategy: reconnectDelay,
      });
    case 'cluster': {
      // The Cluster takes these two itself; each node's connection must not be given them.
      const { retryStrategy, enableOfflineQueue, ...perNode } = common;
      const options = {
        enableOfflineQueue,
        enableAutoPipelining: true,
        lazyConnect: true,
        clusterRetryStrategy: retryStrategy,
        redisOptions: { ...perNode, ...(target.tls ? { tls: {} } : {}) },
      } satisfies ClusterOptions;
      return new Cluster(
        target.nodes.map((n) => ({ host: n.host, port: n.port })),
        options,
      );
    }
  }
}

export class RedisLink {
  /** For ordinary commands: bounded by the command timeout, never queued while disconnected. */
  readonly client: RedisClient;
  readonly url: string;
  readonly commandTimeoutMs: number;
  readonly #target: RedisTarget;
  readonly #logger: Logger;
  readonly #cooldownMs: number;
  readonly #others: RedisClient[] = [];
  readonly #listeners: ((up: boolean) => void)[] = [];
  #failures = 0;
  #openUntil = 0;
  #wasUp = false;
  #closed = false;

  constructor(options: RedisLinkOptions) {
    this.#target = parseRedisUrl(options.url);
    this.url = withoutPasswords(options.url);
    this.#logger = options.logger;
    this.#cooldownMs = options.cooldownMs;
    this.commandTimeoutMs = options.commandTimeoutMs;
    this.client = this.#watch(createClient(this.#target, 'catalog-gateway'));
  }

  /** Connects, waiting at most `waitMs`; a Redis that is not there yet is no reason not to start. */
  async connect(waitMs: number): Promise<void> {
    const connecting = this.client.connect().catch(() => undefined);
    await Promise.race([connecting, sleep(waitMs, undefined, { ref: false })]);
  }

  /**
   * A client of its own for one long-lived use (a blocking stream read, a subscription), whose
   * commands take their deadline from `within`; closed with the link.
   */
  dedicated(name: string): RedisClient {
    const client = this.#watch(createClient(this.#target, `catalog-gateway-${name}`));
    this.#others.push(client);
    client.connect().catch(() => undefined);
    return client;
  }

  /** Connected and the breaker closed: operations are being tried. */
  get up(): boolean {
    return this.client.status === 'ready' && Date.now() >= this.#openUntil;
  }

  /** Why the shared tier is not in use, or undefined when it is. */
  get downReason(): string | undefined {
    if (this.client.status !== 'ready') return `Redis at ${this.url} is not connected (${this.client.status})`;
    if (Date.now() < this.#openUntil) return `Redis at ${this.url} failed ${FAILURES_TO_OPEN} operations in a row; retrying after a pause`;
    return undefined;
  }

  /** Called with true when sharing resumes and false when it stops. */
  onChange(listener: (up: boolean) => void): void {
    this.#listeners.push(listener);
  }

  /** Runs `op`; undefined when the breaker is open or the operation fails or times out. */
  async run<T>(op: (client: RedisClient) => Promise<T>): Promise<T | undefined> {
    if (!this.up) return undefined;
    try {
      const result = await this.within(this.client, this.commandTimeoutMs, op);
      this.#failures = 0;
      return result;
    } catch (err) {
      this.#failed(err);
      return undefined;
    }
  }

  /**
   * Runs `op` on `client` (this link's own, or a dedicated one), failing it after `ms`. Until it
   * settles, the connection is watched: once nothing at all came back on it for `ms`, it is taken
   * for cut off and every connection of the link is reset (they share the path to Redis, and a
   * subscription that only listens would not notice by itself). A connection that answers other
   * commands meanwhile is only slow, and is kept: resetting it would send every waiter of the
   * fleet's locks to the origin at once.
   */
  async within<T>(client: RedisClient, ms: number, op: (client: RedisClient) => Promise<T>): Promise<T> {
    const running = op(client);
    // An object, not a `let`: the compiler does not see the callbacks' assignment.
    const state = { settled: false };
    const settle = (): void => {
      state.settled = true;
    };
    running.then(settle, settle);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      let read = bytesRead(client);
      const watch = (first: boolean): void => {
        timer = setTimeout(() => {
          // Timers run before I/O in an event-loop turn: after a stall (GC, a busy CPU) the answer
          // may be waiting in the socket already. It is read first, and only then is it missing.
          setImmediate(() => {
            if (state.settled) return;
            if (first) reject(new RedisDeadlineError(ms));
            const now = bytesRead(client);
            if (now !== read) {
              read = now;
              watch(false);
              return;
            }
            this.#logger.debug({ redis: this.url, ms }, 'nothing from Redis in time: resetting the connections');
            for (const c of [this.client, ...this.#others]) resetConnection(c);
          });
        }, ms);
        timer.unref();
      };
      watch(true);
    });
    try {
      return await Promise.race([running, deadline]);
    } finally {
      if (state.settled) clearTimeout(timer);
    }
  }

  #failed(err: unknown): void {
    this.#failures++;
    if (this.#failures < FAILURES_TO_OPEN || this.#closed) return;
    this.#failures = 0;
    this.#openUntil = Date.now() + this.#cooldownMs;
    this.#logger.warn({ err, redis: this.url, cooldownMs: this.#cooldownMs }, 'Redis operations keep failing: serving from the local cache alone for a while');
    this.#changed();
    setTimeout(() => {
      this.#changed();
    }, this.#cooldownMs).unref();
  }

  #watch(client: RedisClient): RedisClient {
    // ioredis emits 'error' for every failed reconnection; without a listener that is a crash.
    client.on('error', (err: unknown) => {
      this.#logger.debug({ err, redis: this.url }, 'Redis connection error');
    });
    // ioredis bounds the TCP connect only: a handshake (AUTH, the ready check) sent just before a
    // partition would wait for TCP to give up, minutes later.
    let handshake: NodeJS.Timeout | undefined;
    client.on('connect', () => {
      clearTimeout(handshake);
      handshake = setTimeout(() => {
        resetConnection(client);
      }, CONNECT_TIMEOUT_MS + this.commandTimeoutMs);
      handshake.unref();
    });
    client.on('ready', () => {
      clearTimeout(handshake);
      this.#changed();
    });
    client.on('close', () => {
      clearTimeout(handshake);
      this.#changed();
    });
    return client;
  }

  #changed(): void {
    const up = this.up;
    if (up === this.#wasUp || this.#closed) return;
    this.#wasUp = up;
    if (up) this.#logger.info({ redis: this.url }, 'sharing the cache through Redis');
    else this.#logger.warn({ redis: this.url, reason: this.downReason }, 'the shared cache tier is unavailable: serving from the local cache alone');
    for (const listener of this.#listeners) listener(up);
  }

  /**
   * Closes every connection at once. Not `QUIT`: its answer would keep a stopping process waiting
   * on a slow or cut-off Redis, and nothing is left to say to Redis (the purges still queued were
   * sent, or are not sent by `QUIT` either).
   */
  close(): void {
    this.#closed = true;
    for (const c of [this.client, ...this.#others]) c.disconnect();
  }
}

/** An operation that did not finish within its deadline. */
export class RedisDeadlineError extends Error {
  constructor(ms: number) {
    super(`no answer from Redis within ${ms} ms`);
    this.name = 'RedisDeadlineError';
  }
}

/** The connection's nodes. */
function nodesOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes() : [client];
}

/** Bytes read on `client`'s sockets now; a new socket after a reconnection starts again from 0. */
function bytesRead(client: RedisClient): number {
  // The `stream` is undefined before the first connection; ioredis types it as always there.
  return nodesOf(client).reduce((sum, c) => sum + ((c.stream as Socket | undefined)?.bytesRead ?? 0), 0);
}

/**
 * Resets `client`'s connections (every node's, for a Cluster, since which one holds the late
 * command is not known): each socket goes with an RST, and ioredis reconnects.
 */
function resetConnection(client: RedisClient): void {
  for (const c of nodesOf(client)) {
    const stream = c.stream as Socket | undefined;
    if (stream !== undefined && !stream.destroyed) stream.resetAndDestroy();
  }
}
