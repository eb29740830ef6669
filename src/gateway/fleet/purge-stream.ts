/**
 * Purge fan-out (issue 10): every purge a process takes (admin API, availability event) is
 * applied to its own cache at once and appended to one Redis Stream; every process follows the
 * stream from the last id it has read and applies the others' purges to its local cache. A stream,
 * not pub/sub, so that a process that lost its connection reads what it missed when it is back;
 * when the stream has been trimmed past that point it cannot know what it missed, and drops its
 * whole local cache instead. Purges taken while Redis is unreachable are kept and sent when it
 * returns, so none is lost. What it reads also goes into the process's purge log, in stream order,
 * by which shared entries are judged (../purge/purge-log.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Purge, PurgeLog } from '../purge/purge-log.ts';
import type { FleetMetrics } from './fleet-metrics.ts';
import type { RedisClient, RedisLink } from './redis-link.ts';
import { compareIds, FIRST_ID } from './stream-id.ts';

export interface PurgeStreamOptions {
  readonly link: RedisLink;
  /** The stream's key. */
  readonly key: string;
  /** The id of the processes that hand each other purges already (this host's workers), or this process's own: their purges read back are not applied twice. */
  readonly groupId: string;
  /** This process's own id: its purges read back are no longer unread in the log. */
  readonly processId: string;
  /** The process's purge log. */
  readonly log: PurgeLog;
  /** Purges the stream keeps (approximately) and each process remembers. */
  readonly limit: number;
  /** Applies another process's purge to this process's cache, without sending it again. */
  readonly apply: (purge: Purge) => void;
  readonly metrics: FleetMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

interface Message extends Purge {
  /** The sender's group id. */
  readonly from: string;
  /** The sender's process id, and the purge's generation there. */
  readonly by: string;
  readonly gen: number;
}

/** A purge on its way to the stream, and who waits for it to be there. */
interface Outgoing {
  readonly purge: Purge;
  readonly gen: number;
  readonly sent: (() => void)[];
}

/** Purges kept while Redis is unreachable; past this many, one purge of everything stands for them. */
const MAX_PENDING = 1000;
/**
 * A blocking read's wait at Redis; the read's deadline is this plus the command timeout, after
 * which the connection is taken for cut off and replaced (redis-link.ts).
 */
const BLOCK_MS = 1000;
const RETRY_MS = 200;

type Entries = [id: string, fields: string[]][];

function parseMessage(fields: readonly string[]): Message | undefined {
  const at = fields.indexOf('p');
  const text = at >= 0 ? fields[at + 1] : undefined;
  if (text === undefined) return undefined;
  try {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (
      typeof m.selector !== 'object' ||
      m.selector === null ||
      typeof m.soft !== 'boolean' ||
      typeof m.at !== 'number' ||
      typeof m.from !== 'string' ||
      typeof m.by !== 'string' ||
      typeof m.gen !== 'number'
    )
      return undefined;
    return m as unknown as Message;
  } catch {
    return undefined;
  }
}

/** The stream's `max-deleted-entry-id` (Redis 7): purges at or before it are gone from the stream. */
async function trimmedUpTo(client: RedisClient, key: string): Promise<string> {
  try {
    const info = (await client.call('XINFO', 'STREAM', key)) as unknown[];
    const at = info.indexOf('max-deleted-entry-id');
    const value = at >= 0 ? info[at + 1] : undefined;
    return typeof value === 'string' ? value : FIRST_ID;
  } catch (err) {
    if (err instanceof Error && /no such key/i.test(err.message)) return FIRST_ID;
    throw err;
  }
}

export class PurgeStream {
  readonly #o: PurgeStreamOptions;
  readonly #pending: Outgoing[] = [];
  #reader: RedisClient | undefined;
  #lastId = FIRST_ID;
  /** Whether the log is complete up to `#lastId`, so shared entries may be judged by it. */
  #synced = false;
  #stopped = false;
  /** One flush at a time, so purges reach the stream in the order they were taken. */
  #flushing = false;
  #loop: Promise<void> | undefined;
  #lastHeardAt: number;

  constructor(options: PurgeStreamOptions) {
    this.#o = options;
    this.#lastHeardAt = options.now();
    options.link.onChange((up) => {
      if (up) this.#flush();
      // Nobody waits on a Redis that is gone: the purges stay queued for when it is back.
      else this.#releaseWaiters();
    });
  }

  /** Whether shared entries can be judged: the stream has been read since the last gap. */
  get synced(): boolean {
    return this.#synced;
  }

  /** When the stream was last read (an empty blocking read counts): every purge sent before is known. */
  get lastHeardAt(): number {
    return this.#lastHeardAt;
  }

  start(): void {
    this.#reader = this.#o.link.dedicated('purges');
    this.#loop = this.#follow();
  }

  /**
   * Sends a purge this process has already applied (its generation `gen`) to every other process.
   * Resolves once it is on the stream, or at once while Redis is not usable (it is sent when
   * Redis is back).
   */
  publish(purge: Purge, gen: number): Promise<void> {
    return new Promise((resolve) => {
      this.#pending.push({ purge, gen, sent: [resolve] });
      if (this.#pending.length > MAX_PENDING) {
        const dropped = this.#pending.splice(0, this.#pending.length);
        this.#pending.push({ purge: { selector: { kind: 'all' }, soft: false, at: this.#o.now() }, gen, sent: dropped.flatMap((d) => d.sent) });
      }
      if (this.#o.link.up) this.#flush();
      else this.#releaseWaiters();
    });
  }

  #releaseWaiters(): void {
    for (const outgoing of this.#pending) for (const sent of outgoing.sent.splice(0)) sent();
  }

  #flush(): void {
    if (this.#flushing || this.#pending.length === 0 || !this.#o.link.up) return;
    this.#flushing = true;
    void (async () => {
      while (this.#pending.length > 0) {
        const next = this.#pending[0];
        if (next === undefined) break;
        const body = JSON.stringify({ ...next.purge, from: this.#o.groupId, by: this.#o.processId, gen: next.gen } satisfies Message);
        const id = await this.#o.link.run((c) => c.xadd(this.#o.key, 'MAXLEN', '~', String(this.#o.limit), '*', 'p', body));
        if (id === undefined || id === null) break;
        this.#pending.shift();
        for (const sent of next.sent) sent();
        this.#o.metrics.purgeSent();
      }
      this.#flushing = false;
      if (!this.#o.link.up) this.#releaseWaiters();
    })();
  }

  async #follow(): Promise<void> {
    const reader = this.#reader;
    if (reader === undefined) return;
    while (!this.#stopped) {
      try {
        if (reader.status !== 'ready') {
          this.#synced = false;
          await sleep(RETRY_MS);
          continue;
        }
        if (!this.#synced) await this.#resync(reader);
        const { link } = this.#o;
        const issued = this.#o.now();
        const reply = await link.within(reader, BLOCK_MS + link.commandTimeoutMs, (c) =>
          c.xread('COUNT', 1000, 'BLOCK', BLOCK_MS, 'STREAMS', this.#o.key, this.#lastId),
        );
        for (const [, entries] of reply ?? []) this.#take(entries);
        // What was sent before the read was issued is in hand; an empty reply also says nothing
        // came for the whole wait, which Redis ends no sooner than BLOCK_MS after the read reached
        // it. Counting from the reply's arrival minus the wait instead put a busy process's last
        // hearing two waits back, over partitionBoundMs at every event-loop delay: hits revalidated.
        this.#lastHeardAt = Math.max(this.#lastHeardAt, reply === null ? Math.min(issued + BLOCK_MS, this.#o.now()) : issued);
      } catch (err) {
        if (this.#isStopped()) return;
        this.#synced = false;
        this.#o.logger.debug({ err }, 'reading the purge stream failed; retrying');
        await sleep(RETRY_MS);
      }
    }
  }

  /** Reads what was missed since `#lastId`, or, when the stream no longer has it, starts over. */
  async #resync(reader: RedisClient): Promise<void> {
    const { link } = this.#o;
    const trimmed = await link.within(reader, link.commandTimeoutMs, (c) => trimmedUpTo(c, this.#o.key));
    if (compareIds(trimmed, this.#lastId) > 0) {
      if (this.#lastId !== FIRST_ID) {
        // Purges were trimmed from the stream before this process read them: anything in the
        // local cache may be one of what they removed.
        this.#o.logger.warn({ lastRead: this.#lastId, trimmedUpTo: trimmed }, 'purges were missed while Redis was unreachable: dropping the local cache');
        this.#o.apply({ selector: { kind: 'all' }, soft: false, at: this.#o.now() });
        this.#o.metrics.localCacheDropped();
      }
      this.#o.log.resetStream(trimmed);
      this.#lastId = trimmed;
    }
    for (;;) {
      const entries = (await link.within(reader, link.commandTimeoutMs, (c) => c.xrange(this.#o.key, `(${this.#lastId}`, '+', 'COUNT', 1000))) as Entries;
      this.#take(entries);
      if (entries.length < 1000) break;
    }
    this.#synced = true;
    this.#lastHeardAt = this.#o.now();
  }

  #take(entries: Entries): void {
    for (const [id, fields] of entries) {
      this.#lastId = id;
      const message = parseMessage(fields);
      if (message === undefined) continue;
      const invalidation = message.invalidation === 'unsafe-request' || message.invalidation === 'validation' ? { invalidation: message.invalidation } : {};
      const purge: Purge = {
        selector: message.selector,
        soft: message.soft,
        at: message.at,
        ...(typeof message.event === 'string' ? { event: message.event } : {}),
        ...invalidation,
      };
      this.#o.log.streamed(id, purge, message.by === this.#o.processId ? message.gen : undefined);
      if (message.from === this.#o.groupId) continue;
      this.#o.apply(purge);
      this.#o.metrics.purgeReceived();
    }
  }

  /** Read through a method: the loop's condition would otherwise pin its type to false. */
  #isStopped(): boolean {
    return this.#stopped;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#reader?.disconnect();
    await this.#loop;
  }
}
