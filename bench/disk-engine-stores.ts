/**
 * The two candidate engines of the disk tier (issue 57), each laid out as the tier would use it,
 * for bench/disk-engines.ts. Both keep: an entry's bytes by key, when it was last written (for
 * eviction, oldest first), its size (for a bound in bytes) and its tags (for purge by tag).
 *
 * - `sqlite` (`node:sqlite`): WAL, synchronous=NORMAL, a table of entries with an index on `used`,
 *   a table of (tag, key) with an index on key so that forgetting an entry drops its tag rows; one
 *   `BEGIN IMMEDIATE` transaction per call, so a call holds the event loop until its commit.
 * - `sqlite-mmap`: the same, reading through `PRAGMA mmap_size` (4 GiB).
 * - `sqlite-worker`: the same as `sqlite`, with the writing connection on a worker thread and reads on a
 *   connection of the caller's thread; `sqlite-worker-folded` writes all the batches waiting for the
 *   worker in one transaction, as lmdb's write thread does.
 * - `lmdb-async` (`lmdb`): named databases for entries, meta (sequence, size, tags), a sequence →
 *   key index and a tag → key index (dupSort); a call reads synchronously and queues its writes in
 *   one `batch`, which lmdb's write thread commits after the call has returned.
 * - `lmdb-sync`: the same layout, each call one `transactionSync` committed before it returns,
 *   flushed by lmdb's own thread afterwards (`NO_SYNC_FLUSH` with the default overlappingSync, as
 *   its `putSync` does), the nearest to sqlite's synchronous=NORMAL.
 */
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { open, TransactionFlags, type Database, type RootDatabase } from 'lmdb';

export const ENGINE_NAMES = ['sqlite', 'sqlite-mmap', 'sqlite-worker', 'sqlite-worker-folded', 'lmdb-async', 'lmdb-sync'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export interface WriteEntry {
  readonly key: string;
  readonly value: Uint8Array;
  readonly tags: readonly string[];
}

export interface Removed {
  readonly entries: number;
  readonly bytes: number;
}

export interface DiskEngine {
  /** Stores a batch in one transaction; a promise when the commit comes after the call returns. */
  write(batch: readonly WriteEntry[]): Promise<unknown> | undefined;
  get(key: string): Uint8Array | undefined;
  purgeTag(tag: string): Removed | Promise<Removed>;
  /** Forgets the `count` least recently written entries. */
  evictOldest(count: number): Removed | Promise<Removed>;
  close(): void;
}

export function openEngine(name: EngineName, dir: string): DiskEngine {
  switch (name) {
    case 'sqlite':
      return new SqliteEngine(dir);
    case 'sqlite-mmap':
      return new SqliteEngine(dir, MMAP_BYTES);
    case 'sqlite-worker':
      return new SqliteWorkerEngine(dir, false);
    case 'sqlite-worker-folded':
      return new SqliteWorkerEngine(dir, true);
    default:
      return new LmdbEngine(dir, name === 'lmdb-async');
  }
}

/** Reads through a memory map of the file, as LMDB's do, instead of a read() per page into SQLite's own cache. */
const MMAP_BYTES = 4 * 1024 ** 3;

export class SqliteEngine implements DiskEngine {
  readonly #db: DatabaseSync;
  readonly #put: StatementSync;
  readonly #dropTags: StatementSync;
  readonly #addTag: StatementSync;
  readonly #get: StatementSync;
  readonly #drop: StatementSync;
  readonly #keysOf: StatementSync;
  readonly #oldest: StatementSync;
  #used: number;

  constructor(dir: string, mmapBytes = 0) {
    // A second process may hold the write lock for a commit; wait rather than fail.
    this.#db = new DatabaseSync(join(dir, 'cache.sqlite'), { timeout: 5000 });
    this.#db.exec(`
      PRAGMA mmap_size = ${mmapBytes};
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, bytes INTEGER NOT NULL, used INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS entries_used ON entries (used);
      CREATE TABLE IF NOT EXISTS tags (tag TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (tag, key)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS tags_key ON tags (key);
    `);
    this.#put = this.#db.prepare(
      'INSERT INTO entries (key, value, bytes, used) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, used = excluded.used',
    );
    this.#dropTags = this.#db.prepare('DELETE FROM tags WHERE key = ?');
    this.#addTag = this.#db.prepare('INSERT OR IGNORE INTO tags (tag, key) VALUES (?, ?)');
    this.#get = this.#db.prepare('SELECT value FROM entries WHERE key = ?');
    this.#drop = this.#db.prepare('DELETE FROM entries WHERE key = ? RETURNING bytes');
    this.#keysOf = this.#db.prepare('SELECT key FROM tags WHERE tag = ?');
    this.#oldest = this.#db.prepare('SELECT key FROM entries ORDER BY used LIMIT ?');
    const row = this.#db.prepare('SELECT COALESCE(MAX(used), 0) AS used FROM entries').get() as { used: number };
    this.#used = row.used;
  }

  write(batch: readonly WriteEntry[]): undefined {
    this.#transaction(() => {
      for (const entry of batch) {
        this.#used += 1;
        this.#put.run(entry.key, entry.value, entry.value.length, this.#used);
        this.#dropTags.run(entry.key);
        for (const tag of entry.tags) this.#addTag.run(tag, entry.key);
      }
    });
    return undefined;
  }

  get(key: string): Uint8Array | undefined {
    return (this.#get.get(key) as { value: Uint8Array } | undefined)?.value;
  }

  purgeTag(tag: string): Removed {
    return this.#transaction(() => this.#forget(this.#keysOf.all(tag) as { key: string }[]));
  }

  evictOldest(count: number): Removed {
    return this.#transaction(() => this.#forget(this.#oldest.all(count) as { key: string }[]));
  }

  close(): void {
    this.#db.close();
  }

  #forget(rows: readonly { key: string }[]): Removed {
    let entries = 0;
    let bytes = 0;
    for (const { key } of rows) {
      const dropped = this.#drop.get(key) as { bytes: number } | undefined;
      if (dropped === undefined) continue;
      entries += 1;
      bytes += dropped.bytes;
      this.#dropTags.run(key);
    }
    return { entries, bytes };
  }

  #transaction<T>(body: () => T): T {
    // IMMEDIATE takes the write lock at once: a deferred transaction that reads first can fail
    // with SQLITE_BUSY on its first write when another process wrote meanwhile.
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = body();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      // Some errors (SQLITE_FULL among them) have rolled the transaction back already, and a
      // ROLLBACK then throws "no transaction is active" in place of the error that matters.
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw err;
    }
  }
}

export interface WriterData {
  readonly dir: string;
  /** Write every batch waiting when the writer gets to them in one transaction, as lmdb's write thread does. */
  readonly fold: boolean;
}

/** A request to the writer thread of `sqlite-worker` (disk-engine-writer.ts). */
export type WriterRequest =
  | { readonly id: number; readonly op: 'write'; readonly batch: readonly WriteEntry[] }
  | { readonly id: number; readonly op: 'purgeTag'; readonly tag: string }
  | { readonly id: number; readonly op: 'evictOldest'; readonly count: number };

export interface WriterReply {
  readonly id: number;
  readonly removed?: Removed;
  readonly error?: string;
}

/**
 * SQLite with its writes on a worker thread, as lmdb-async has them on lmdb's: the worker owns
 * the writing connection, this thread reads through a connection of its own (WAL lets readers
 * run beside the writer). A call holds the event loop for the copy of its batch into the message.
 */
class SqliteWorkerEngine implements DiskEngine {
  readonly #reader: SqliteEngine;
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (removed: Removed) => void; reject: (err: Error) => void }>();
  #nextId = 0;

  constructor(dir: string, fold: boolean) {
    // The schema exists before either connection needs it.
    this.#reader = new SqliteEngine(dir);
    this.#worker = new Worker(new URL('./disk-engine-writer.ts', import.meta.url), { workerData: { dir, fold } satisfies WriterData });
    this.#worker.on('message', (reply: WriterReply) => {
      const waiter = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.error === undefined) waiter?.resolve(reply.removed ?? { entries: 0, bytes: 0 });
      else waiter?.reject(new Error(reply.error));
    });
    this.#worker.on('error', (err: Error) => {
      for (const waiter of this.#waiting.values()) waiter.reject(err);
      this.#waiting.clear();
    });
  }

  write(batch: readonly WriteEntry[]): Promise<Removed> {
    return this.#ask({ id: this.#nextId++, op: 'write', batch });
  }

  get(key: string): Uint8Array | undefined {
    return this.#reader.get(key);
  }

  purgeTag(tag: string): Promise<Removed> {
    return this.#ask({ id: this.#nextId++, op: 'purgeTag', tag });
  }

  evictOldest(count: number): Promise<Removed> {
    return this.#ask({ id: this.#nextId++, op: 'evictOldest', count });
  }

  close(): void {
    this.#reader.close();
    void this.#worker.terminate();
  }

  #ask(request: WriterRequest): Promise<Removed> {
    return new Promise((resolve, reject) => {
      this.#waiting.set(request.id, { resolve, reject });
      this.#worker.postMessage(request);
    });
  }
}

/**
 * lmdb rejects every pending write's own promise when a queued commit fails, and the error's
 * `commitError` is one more rejected promise: any of them left without a handler ends the process
 * (found on a full disk). The batch's promise is the one that reports the failure.
 */
function handled(promise: Promise<unknown>): void {
  promise.catch(() => undefined);
}

/** What the tier keeps beside an entry's bytes: its write sequence, its size, its tags. */
interface Meta {
  readonly s: number;
  readonly b: number;
  readonly t: readonly string[];
}

class LmdbEngine implements DiskEngine {
  readonly #root: RootDatabase;
  readonly #entries: Database<Uint8Array, string>;
  readonly #meta: Database<Meta, string>;
  readonly #bySequence: Database<string, number>;
  readonly #tags: Database<string, string>;
  readonly #queued: boolean;
  #sequence = 0;

  constructor(dir: string, queued: boolean) {
    this.#queued = queued;
    // With lmdb's default eventTurnBatching, a failed commit (a full disk) also rejects a promise
    // lmdb made for the turn's batch and kept to itself, and that unhandled rejection ends the process.
    this.#root = open({ path: join(dir, 'lmdb'), maxDbs: 8, eventTurnBatching: false });
    this.#entries = this.#root.openDB<Uint8Array, string>({ name: 'entries', encoding: 'binary' });
    this.#meta = this.#root.openDB<Meta, string>({ name: 'meta' });
    this.#bySequence = this.#root.openDB<string, number>({ name: 'sequence', keyEncoding: 'uint32', encoding: 'string' });
    this.#tags = this.#root.openDB<string, string>({ name: 'tags', dupSort: true, encoding: 'string' });
    for (const { key } of this.#bySequence.getRange({ reverse: true, limit: 1 })) this.#sequence = key;
  }

  write(batch: readonly WriteEntry[]): Promise<unknown> | undefined {
    const done = this.#transaction(() => {
      for (const entry of batch) {
        this.#forgetOne(entry.key);
        this.#sequence += 1;
        handled(this.#entries.put(entry.key, entry.value));
        handled(this.#meta.put(entry.key, { s: this.#sequence, b: entry.value.length, t: entry.tags }));
        handled(this.#bySequence.put(this.#sequence, entry.key));
        for (const tag of entry.tags) handled(this.#tags.put(tag, entry.key));
      }
      return true;
    });
    return done instanceof Promise ? done : undefined;
  }

  get(key: string): Uint8Array | undefined {
    return this.#entries.get(key);
  }

  purgeTag(tag: string): Removed | Promise<Removed> {
    return this.#transaction(() => this.#forget(this.#tags.getValues(tag)));
  }

  evictOldest(count: number): Removed | Promise<Removed> {
    return this.#transaction(() => this.#forget(this.#bySequence.getRange({ limit: count }).map(({ value }) => value)));
  }

  close(): void {
    handled(this.#root.close());
  }

  #forget(keys: Iterable<string>): Removed {
    let entries = 0;
    let bytes = 0;
    // Collected first: the iterator reads the index this loop deletes from.
    for (const key of [...keys]) {
      const freed = this.#forgetOne(key);
      if (freed === undefined) continue;
      entries += 1;
      bytes += freed;
    }
    return { entries, bytes };
  }

  #forgetOne(key: string): number | undefined {
    const meta = this.#meta.get(key);
    if (meta === undefined) return undefined;
    handled(this.#entries.remove(key));
    handled(this.#meta.remove(key));
    handled(this.#bySequence.remove(meta.s));
    for (const tag of meta.t) handled(this.#tags.remove(tag, key));
    return meta.b;
  }

  /**
   * lmdb-async: `batch` runs `body` now (its reads see the last commit) and its writes commit on
   * lmdb's write thread; the promise carries `body`'s result once they have. lmdb-sync: committed
   * before returning, not flushed (lmdb's overlapping sync flushes it on its own thread).
   */
  #transaction<T>(body: () => T): T | Promise<T> {
    if (!this.#queued)
      return this.#root.transactionSync(body, TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT | TransactionFlags.NO_SYNC_FLUSH);
    let result: T | undefined;
    const committed = this.#root.batch(() => {
      result = body();
    });
    void committed.catch((err: unknown) => {
      const cause = (err as { commitError?: unknown }).commitError;
      if (cause instanceof Promise) handled(cause);
    });
    return committed.then(() => result as T);
  }
}
