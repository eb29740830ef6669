/**
 * The host's disk tier: the same encoded entries as the fleet's tier (entry-codec.ts), in an
 * embedded SQLite database (`node:sqlite`, WAL) under the data directory, bounded in bytes and
 * evicted least recently used first. It outlives the process: a restarted gateway — stopped,
 * killed or rolled — answers from it at once, and every worker of a host shares it, so a query is
 * fetched once per host. docs/architecture.md says why SQLite and not LMDB; docs/caching.md how a
 * restart stays correct ("After downtime").
 *
 * Reads are synchronous (a point read of a page in the OS cache costs microseconds, less than a
 * promise would), and the reads of one turn of the event loop share one read transaction
 * (`#reading`); writes are queued and committed together, once per turn of the event loop, in one
 * transaction, so a burst of fills costs one commit. A queued write is judged once more by the
 * purges made meanwhile when it is committed.
 *
 * A value holds the kept representation, and the codings its hits were asked for besides: a hit
 * in a coding the value lacks makes it from the kept body, as a memory hit does, and the tier adds
 * it to the value (`add`), so that the entry's next hits read it instead of decompressing the body
 * again each time (an identity client's hits on a gzip entry).
 *
 * A value's checksum is computed on a read only when the value was written before the machine last
 * started (`BOOT`): a value torn or half-flushed by a crash can only be one of those. Within a
 * boot, a writer killed mid-commit leaves nothing of it (SQLite's transactions in WAL mode), and a
 * disk that lies about a flush loses what it held back only when the machine goes down with it.
 *
 * Faults never reach a request: a value whose checksum fails is deleted and missed; a database
 * that is not one, is damaged, or is of another layout is set aside with one log line and the tier
 * starts empty; a full disk drops the writes (counted, logged once) while reads and the memory
 * tier go on, and writes resume when space returns. Two gateways must not share the directory
 * (their purges would not reach each other's memory): the second is refused at start, naming it.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Logger } from 'pino';
import type { Config } from '../../../config/schema.ts';
import type { Purge, PurgeLog } from '../../purge/purge-log.ts';
import type { HeaderFields } from '../../rules/cache-control.ts';
import { CODEC_VERSION, decodeEntry, encodeEntry, type EncodedEntry } from '../record/entry-codec.ts';
import type { WrittenVariants } from '../record/entry-record.ts';
import type { CacheKey } from '../memory/response-cache.ts';
import { staleFrom, type EntryMaker, type Representation, type StoredResponse } from '../stored-response.ts';
import { judged, selects, type CacheTier, type FillStamp, type NotKept, type TierSize } from '../tier.ts';
import type { DiskMetrics } from './disk-metrics.ts';

export interface DiskStoreOptions {
  /** The directory (`gateway.cache.disk.path`). */
  readonly dir: string;
  /** The bound on what the entries take on disk (`gateway.cache.disk.maxBytes`). */
  readonly maxBytes: number;
  /** Largest entry kept (`gateway.cache.maxEntryBytes`). */
  readonly maxEntryBytes: number;
  /** The pid of the gateway that owns the directory: this process, or the primary of its workers. */
  readonly owner: number;
  readonly maker: EntryMaker;
  readonly purges: PurgeLog;
  readonly metrics: DiskMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A gateway refused the directory: another live gateway owns it. */
export class DiskTierInUse extends Error {
  constructor(dir: string, pid: number) {
    super(
      `gateway.cache.disk.path ${dir} is in use by another gateway (pid ${pid}); give each gateway a directory of its own, or set gateway.cache.disk.enabled to false`,
    );
    this.name = 'DiskTierInUse';
  }
}

/**
 * The layout's version, kept in SQLite's `user_version`: the schema's and the codec's together,
 * so a database written by another version is set aside rather than misread.
 */
const LAYOUT_VERSION = 100 + CODEC_VERSION;

const SCHEMA = `
CREATE TABLE entry (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  value BLOB NOT NULL,
  bytes INTEGER NOT NULL,
  used INTEGER NOT NULL,
  stale_from INTEGER,
  boot INTEGER NOT NULL
);
CREATE INDEX entry_by_use ON entry (used);
CREATE TABLE tag (tag TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (tag, id)) WITHOUT ROWID;
CREATE INDEX tag_by_entry ON tag (id);
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES ('bytes', 0), ('entries', 0), ('clock', 0);
CREATE TRIGGER entry_added AFTER INSERT ON entry BEGIN
  UPDATE meta SET value = value + NEW.bytes WHERE name = 'bytes';
  UPDATE meta SET value = value + 1 WHERE name = 'entries';
END;
CREATE TRIGGER entry_changed AFTER UPDATE OF bytes ON entry BEGIN
  UPDATE meta SET value = value + NEW.bytes - OLD.bytes WHERE name = 'bytes';
END;
CREATE TRIGGER entry_gone AFTER DELETE ON entry BEGIN
  DELETE FROM tag WHERE id = OLD.id;
  UPDATE meta SET value = value - OLD.bytes WHERE name = 'bytes';
  UPDATE meta SET value = value - 1 WHERE name = 'entries';
END;
PRAGMA user_version = ${LAYOUT_VERSION};
`;

/**
 * What a row costs besides its value: the key twice (row and unique index), the row and index
 * records (its times and boot among them), the `used` index entry, and each tag's row in the tag
 * table and its index.
 */
const ROW_BYTES = 72;
const TAG_BYTES = 24;

/**
 * The database's page, set when it is made: a catalog answer of about 2 KB takes a 4 KiB page of
 * its own at SQLite's default (two do not fit one), so the file grew to about 2.4 times what its
 * rows hold (docs/architecture.md, "The disk tier's engine"); at 16 KiB they share pages.
 */
const PAGE_BYTES = 16 * 1024;

/**
 * Bits of the read marks (`#reread`), a row's id taken modulo: 128 KiB outside V8's heap. Rows
 * whose ids share a bit share their mark, which at most gives a row a second chance it did not
 * earn, or takes one away after the other was looked at.
 */
const READ_MARK_BITS = 1 << 20;

/** Rows looked at per step while over the bound, least recently used first. */
const EVICT_BATCH = 256;

/** How long a write waits for another process's transaction before it gives up (and is counted). */
const BUSY_TIMEOUT_MS = 200;
/** How long opening waits for the other workers of the host opening it too. */
const OPEN_TIMEOUT_MS = 10_000;

/** SQLite's result codes for a database that is damaged or not a database, and for a full disk. */
const SQLITE_BUSY = 5;
const SQLITE_CORRUPT = 11;
const SQLITE_NOTADB = 26;
const SQLITE_FULL = 13;
const SQLITE_IOERR = 10;

/** Between two tries at WAL mode while another process sets it. */
const WAL_RETRY_MS = 10;

/**
 * Puts the database in WAL mode. Processes opening a new file at one instant each ask for the
 * switch, which needs the file to themselves, and SQLite answers the ones that lose with
 * SQLITE_BUSY at once, without waiting on its busy handler: they try again, as long as opening waits.
 */
function walMode(db: DatabaseSync): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited += WAL_RETRY_MS) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      if (sqliteCode(err) !== SQLITE_BUSY || waited >= OPEN_TIMEOUT_MS) throw err;
      Atomics.wait(pause, 0, 0, WAL_RETRY_MS);
    }
  }
}

function sqliteCode(err: unknown): number | undefined {
  const code = (err as { errcode?: unknown }).errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

interface Queued {
  readonly response: StoredResponse;
  readonly stamp: FillStamp;
  readonly done: (result: NotKept | undefined) => void;
}

/** The last value read, so that a representation made for the hit it answered can be added to it. */
interface Read {
  readonly key: CacheKey;
  /** The value's bytes: the row is rewritten only while it holds them still. */
  readonly value: Buffer;
  readonly entry: EncodedEntry;
  /** What the read answered with: the entry's response, stale from a soft purge when one named it. */
  readonly served: StoredResponse;
}

/** A value to write again with one representation more, if its row still holds `value` when committed. */
interface Addition {
  readonly value: Buffer;
  readonly response: StoredResponse;
  readonly mark: string;
}

/** What a row counts against the bound: its value, its key twice, and its tags. */
function rowBytes(key: CacheKey, value: Buffer, tags: readonly string[]): number {
  return value.length + 2 * key.length + ROW_BYTES + tags.reduce((sum, tag) => sum + tag.length + TAG_BYTES, 0);
}

/**
 * The machine's boot the rows written now are marked with: 48 bits of Linux's boot id, which
 * changes whenever the machine starts, and so after any crash that could lose a flush. Elsewhere
 * 0, which no row is taken for: every value is then checked.
 */
function bootOfMachine(): number {
  try {
    return Number.parseInt(readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').replaceAll('-', '').slice(0, 12), 16) || 0;
  } catch {
    return 0;
  }
}

const BOOT = bootOfMachine();

/** A row that `read` returns: the entry's id, its value, the time a soft purge made it stale from, and the boot it was written in. */
type ReadRow = readonly [id: number, value: Uint8Array, staleFrom: number | null, boot: number];

/**
 * The statement a disk hit reads its row with, which returns the row as an array. As an object
 * (node:sqlite's default) every row read left 72 B in V8's old generation, allocated there
 * directly and freed only by a full collection, whose rate what reaches the old generation sets
 * under the gateway's V8 flags (docs/performance.md, "A disk hit's tail"); as an array, about 4 B.
 */
function readStatement(db: DatabaseSync): StatementSync {
  const read = db.prepare('SELECT id, value, stale_from, boot FROM entry WHERE key = ?');
  read.setReturnArrays(true);
  return read;
}

function readRow(read: StatementSync, key: CacheKey): ReadRow | undefined {
  // node:sqlite's types call every row an object; readStatement made this one's rows arrays.
  return read.get(key) as unknown as ReadRow | undefined;
}

interface Statements {
  readonly begin: StatementSync;
  readonly commit: StatementSync;
  readonly read: StatementSync;
  readonly upsert: StatementSync;
  readonly rewrite: StatementSync;
  readonly clearTags: StatementSync;
  readonly addTag: StatementSync;
  readonly touch: StatementSync;
  readonly meta: StatementSync;
  readonly setMeta: StatementSync;
  readonly oldest: StatementSync;
  readonly deleteId: StatementSync;
  readonly deleteKey: StatementSync;
}

export class DiskStore implements CacheTier {
  readonly name = 'disk';
  readonly #o: DiskStoreOptions;
  readonly #file: string;
  readonly #release: () => void;
  #db: DatabaseSync;
  #s: Statements;
  /** Writes waiting for the turn's commit, by key: a later one for a key replaces the earlier. */
  readonly #queue = new Map<CacheKey, Queued>();
  /** Values to write again with a representation made for a hit, by key, committed with the queued writes. */
  readonly #additions = new Map<CacheKey, Addition>();
  /** What the last read found (`variantsOf`, `add`). */
  #lastRead: Read | undefined;
  /** Rows read since the last commit, whose `used` the commit moves forward. */
  /**
   * Rows read here since eviction last looked at them: the second chance of CLOCK. A read writes
   * nothing; eviction moves a row read meanwhile to the front instead of deleting it, so that hits
   * on a warm disk tier cost no transaction each. A row another worker read is evicted as unread.
   * A bit per row rather than a Set of ids: a Set that fills and is cleared builds its tables anew
   * in V8's old generation once it lives there, about 48 B a read over 150,000 rows read in turn,
   * and what reaches the old generation sets how often full collections run (docs/performance.md,
   * "A disk hit's tail").
   */
  readonly #reread = new Uint32Array(READ_MARK_BITS / 32);
  #flushing: NodeJS.Immediate | undefined;
  /**
   * Set while the turn's reads share a read transaction, which ends at the end of the turn, before
   * a write, and before a look again. In WAL mode a statement outside a transaction takes and lets
   * go of the shared read lock itself: half of a point read's 3.4 µs, paid once a turn instead.
   */
  #reading: NodeJS.Immediate | undefined;
  /** Whether the last write failed for want of space: logged once per episode. */
  #full = false;

  constructor(options: DiskStoreOptions) {
    this.#o = options;
    this.#release = claim(options.dir, options.owner);
    this.#file = join(options.dir, 'cache.db');
    this.#db = this.#open();
    this.#s = this.#prepare();
  }

  /** Opens the database, setting aside one that is not ours to read. */
  #open(): DatabaseSync {
    try {
      return this.#openAs();
    } catch (err) {
      const code = sqliteCode(err);
      if (code !== SQLITE_CORRUPT && code !== SQLITE_NOTADB && !(err instanceof ForeignLayout)) throw err;
      this.#setAside(err);
      return this.#openAs();
    }
  }

  /**
   * The workers of a host open the database at once: the layout is read and, on a new file,
   * made inside one write transaction, so only the first makes it and the others find it made.
   * Opening waits longer for another process's lock than a write does later.
   */
  #openAs(): DatabaseSync {
    const db = new DatabaseSync(this.#file, { timeout: OPEN_TIMEOUT_MS });
    try {
      db.exec(`PRAGMA page_size = ${PAGE_BYTES}`);
      walMode(db);
      db.exec('PRAGMA synchronous = NORMAL');
      db.exec('BEGIN IMMEDIATE');
      const version = (db.prepare('PRAGMA user_version').get()?.user_version as number | undefined) ?? 0;
      if (version === 0) db.exec(SCHEMA);
      else if (version !== LAYOUT_VERSION) throw new ForeignLayout(version);
      // A page-level check of the tables' roots: a damaged file fails here rather than on a request.
      else db.prepare('SELECT count(*) FROM meta').get();
      db.exec(`COMMIT; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      return db;
    } catch (err) {
      if (db.isOpen && db.isTransaction) db.exec('ROLLBACK');
      db.close();
      throw err;
    }
  }

  /** Moves a database this version cannot use out of the way, with one line saying where. */
  #setAside(why: unknown): void {
    const aside = `${this.#file}.bad-${Date.now()}`;
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(this.#file + suffix)) renameSync(this.#file + suffix, aside + suffix);
    this.#o.metrics.error('corrupt');
    this.#o.logger.error({ err: why, file: this.#file, setAside: aside }, 'the disk tier could not be read; set aside, starting empty');
  }

  #prepare(): Statements {
    const db = this.#db;
    return {
      begin: db.prepare('BEGIN'),
      commit: db.prepare('COMMIT'),
      read: readStatement(db),
      upsert: db.prepare(
        'INSERT INTO entry (key, value, bytes, used, stale_from, boot) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, used = excluded.used, stale_from = excluded.stale_from, boot = excluded.boot RETURNING id',
      ),
      rewrite: db.prepare('UPDATE entry SET value = ?, bytes = ?, boot = ? WHERE id = ?'),
      clearTags: db.prepare('DELETE FROM tag WHERE id = ?'),
      addTag: db.prepare('INSERT OR IGNORE INTO tag (tag, id) VALUES (?, ?)'),
      touch: db.prepare('UPDATE entry SET used = ? WHERE id = ?'),
      meta: db.prepare('SELECT value FROM meta WHERE name = ?'),
      setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      oldest: db.prepare('SELECT id, bytes FROM entry ORDER BY used LIMIT ?'),
      deleteId: db.prepare('DELETE FROM entry WHERE id = ?'),
      deleteKey: db.prepare('DELETE FROM entry WHERE key = ?'),
    };
  }

  /** Where the tier and the workers' turns at its fills are counted. */
  get metrics(): DiskMetrics {
    return this.#o.metrics;
  }

  get(key: CacheKey, request: HeaderFields): StoredResponse | undefined {
    const response = this.#select(key, request);
    this.#o.metrics.read(response === undefined ? 'miss' : 'hit');
    return response;
  }

  /** Looks once more after a miss already counted (another worker's fill may have stored it since): counts a hit only. */
  lookAgain(key: CacheKey, request: HeaderFields): StoredResponse | undefined {
    // What another process committed since this turn's first read is seen by a new read transaction only.
    this.#endReads();
    const response = this.#select(key, request);
    if (response !== undefined) this.#o.metrics.read('hit');
    return response;
  }

  #select(key: CacheKey, request: HeaderFields): StoredResponse | undefined {
    const response = this.#queue.get(key)?.response ?? this.#read(key);
    return response !== undefined && selects(response, request) ? response : undefined;
  }

  #read(key: CacheKey): StoredResponse | undefined {
    this.#beginReads();
    const row = this.#guard(() => readRow(this.#s.read, key));
    if (row === undefined) return undefined;
    const [id, value, staleAt, boot] = row;
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.length);
    const entry = decodeEntry(bytes, this.#o.maker, boot === BOOT && BOOT !== 0);
    if (entry === undefined) {
      // Torn, damaged or another version's: never served, and not read again.
      this.#o.metrics.error('checksum');
      this.#guard(() => this.#s.deleteKey.run(key));
      return undefined;
    }
    const bit = id & (READ_MARK_BITS - 1);
    this.#reread[bit >>> 5] = (this.#reread[bit >>> 5] ?? 0) | (1 << (bit & 31));
    const served = staleAt === null ? entry.response : staleFrom(entry.response, staleAt);
    this.#lastRead = { key, value: bytes, entry, served };
    return served;
  }

  /**
   * The variants of the value `response` was read from, when it is what this tier's last read
   * returned and as stored (not stale from a soft purge since): memory copies them on promotion
   * (ResponseCache#adopt).
   */
  variantsOf(response: StoredResponse): WrittenVariants | undefined {
    const read = this.#lastRead;
    return read !== undefined && read.served === response && response === read.entry.response ? read.entry.variants : undefined;
  }

  /**
   * Keeps `made`, a representation made from the kept body for a hit on `response`, in the value
   * that answered it, when that is what this tier's last read returned (otherwise nothing): the
   * entry was asked for before, by its fill, so its next hits in that coding read it (as memory
   * keeps a coding asked for twice). Committed with the turn's writes, and only while the row
   * holds the value read: a fill or purge since is not undone.
   */
  add(response: StoredResponse, made: Representation): void {
    const read = this.#lastRead;
    if (read === undefined || read.served !== response) return;
    this.#additions.set(read.key, { value: read.value, response: read.entry.response.with(made), mark: read.entry.mark });
    this.#schedule();
  }

  /** Queues `response` for the turn's commit; resolves once it is committed, or why it was not. */
  put(key: CacheKey, response: StoredResponse, stamp: FillStamp): Promise<NotKept | undefined> {
    return new Promise((done) => {
      this.#queue.get(key)?.done('refused');
      this.#queue.set(key, { response, stamp, done });
      this.#schedule();
    });
  }

  delete(keys: readonly CacheKey[]): void {
    this.flush();
    this.#write(() => {
      for (const key of keys) this.#s.deleteKey.run(key);
    });
  }

  /**
   * Applies a purge at once, after the queued writes (which the purge log judges as they are
   * committed): every process of the host that hears of a purge applies it, so a write another
   * worker committed just before is caught by that worker's own application.
   */
  purge(purge: Purge): number {
    this.flush();
    const { selector, soft, at } = purge;
    // A soft purge marks stale from the earliest purge that named the entry.
    const action = soft ? 'UPDATE entry SET stale_from = min(coalesce(stale_from, ?), ?)' : 'DELETE FROM entry';
    const first = soft ? [at, at] : [];
    let changed = 0;
    this.#write(() => {
      const run = (where: string, ...params: string[]): void => {
        changed += Number(this.#db.prepare(`${action} WHERE ${where}`).run(...first, ...params).changes);
      };
      switch (selector.kind) {
        case 'all':
          run('1');
          break;
        case 'prefix':
          run('key >= ? AND key < ?', selector.prefix, `${selector.prefix}\u{10ffff}`);
          break;
        case 'urls':
          run('key IN (SELECT value FROM json_each(?))', JSON.stringify(selector.keys));
          break;
        case 'tags':
          run('id IN (SELECT t.id FROM tag t JOIN json_each(?) j ON t.tag = j.value)', JSON.stringify(selector.tags));
          break;
      }
    });
    return changed;
  }

  size(): TierSize {
    return { entries: this.#meta('entries') ?? 0, bytes: this.#meta('bytes') ?? 0 };
  }

  #meta(name: string): number | undefined {
    const row = this.#guard(() => this.#s.meta.get(name));
    return row === undefined ? undefined : Number(row.value);
  }

  #beginReads(): void {
    if (this.#reading !== undefined || this.#db.isTransaction || this.#guard(() => this.#s.begin.run()) === undefined) return;
    this.#reading = setImmediate(() => {
      this.#endReads();
    });
  }

  #endReads(): void {
    if (this.#reading === undefined) return;
    clearImmediate(this.#reading);
    this.#reading = undefined;
    if (this.#db.isTransaction) this.#guard(() => this.#s.commit.run());
  }

  #schedule(): void {
    this.#flushing ??= setImmediate(() => {
      this.flush();
    });
  }

  /** Commits the queued writes in one transaction, then evicts down to the bound. */
  flush(): void {
    if (this.#flushing !== undefined) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    if (this.#queue.size === 0 && this.#additions.size === 0) return;
    const queued = [...this.#queue];
    const additions = [...this.#additions];
    this.#queue.clear();
    this.#additions.clear();
    const results: (NotKept | undefined)[] = [];
    const ok = this.#write(() => {
      // Use is ordered by a clock the host's processes share, ticked once per row, so that no two
      // rows tie and the eviction order is the order of use.
      const clock = { at: this.#meta('clock') ?? 0 };
      for (const [key, { response, stamp }] of queued) results.push(this.#commit(key, response, stamp, ++clock.at));
      for (const [key, addition] of additions) this.#rewrite(key, addition);
      this.#evict(clock);
      this.#s.setMeta.run('clock', clock.at);
    });
    queued.forEach(([, { done }], i) => {
      done(ok ? results[i] : 'failed');
    });
  }

  #commit(key: CacheKey, filled: StoredResponse, stamp: FillStamp, used: number): NotKept | undefined {
    const response = judged(this.#o.purges.sinceGeneration(stamp.generation, key, filled.tags), filled);
    if (response === undefined) return 'purged';
    const value = encodeEntry(response, stamp.mark);
    const tags = response.tags;
    const bytes = rowBytes(key, value, tags);
    if (bytes > this.#o.maxEntryBytes) return 'too-large';
    const row = this.#s.upsert.get(key, value, bytes, used, null, BOOT);
    const id = row?.id as number;
    this.#s.clearTags.run(id);
    for (const tag of tags) this.#s.addTag.run(tag, id);
    this.#o.metrics.written(value.length);
    return undefined;
  }

  /** Writes the row of `key` again with the representations of `response`, unless it no longer holds `value` or they would not fit. */
  #rewrite(key: CacheKey, { value, response, mark }: Addition): void {
    const row = readRow(this.#s.read, key);
    if (row === undefined) return;
    const [id, stored] = row;
    if (!value.equals(stored)) return;
    const added = encodeEntry(response, mark, true);
    const bytes = rowBytes(key, added, response.tags);
    if (bytes > this.#o.maxEntryBytes) return;
    this.#s.rewrite.run(added, bytes, BOOT, id);
    this.#o.metrics.written(added.length);
  }

  /**
   * Deletes the least recently used rows, no more than it takes to be within the bound; a row
   * read since it was last looked at goes to the front instead (its second chance).
   */
  #evict(clock: { at: number }): void {
    let over = (this.#meta('bytes') ?? 0) - this.#o.maxBytes;
    while (over > 0) {
      const rows = this.#s.oldest.all(EVICT_BATCH);
      if (rows.length === 0) return;
      let evicted = 0;
      for (const row of rows) {
        if (over <= 0) break;
        const id = row.id as number;
        if (this.#readSince(id)) {
          this.#s.touch.run(++clock.at, id);
          continue;
        }
        this.#s.deleteId.run(id);
        over -= row.bytes as number;
        evicted++;
      }
      this.#o.metrics.evicted(evicted);
    }
  }

  /** Whether the row was read here since eviction last looked at it; its mark is cleared. */
  #readSince(id: number): boolean {
    const bit = id & (READ_MARK_BITS - 1);
    const word = this.#reread[bit >>> 5] ?? 0;
    const mask = 1 << (bit & 31);
    this.#reread[bit >>> 5] = word & ~mask;
    return (word & mask) !== 0;
  }

  /**
   * Runs `work` in one write transaction. A full disk or another fault of the medium drops the
   * work (counted; logged once until a write succeeds again); a damaged database is set aside.
   */
  #write(work: () => void): boolean {
    this.#endReads();
    return (
      this.#guard(() => {
        try {
          this.#db.exec('BEGIN IMMEDIATE');
          work();
          this.#db.exec('COMMIT');
        } catch (err) {
          if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
          throw err;
        }
        if (this.#full) this.#o.logger.info({ dir: this.#o.dir }, 'the disk tier is writable again');
        this.#full = false;
        return true;
      }) ?? false
    );
  }

  /** Runs a statement; what the medium or the file got wrong becomes undefined (and is handled), never a failed request. */
  #guard<T>(work: () => T): T | undefined {
    try {
      return work();
    } catch (err) {
      const code = sqliteCode(err);
      if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB) {
        this.#reopen(err);
        return undefined;
      }
      const full = code === SQLITE_FULL || code === SQLITE_IOERR;
      this.#o.metrics.error(full ? 'full' : 'io');
      if (!full || !this.#full)
        this.#o.logger.warn(
          { err, dir: this.#o.dir },
          full ? 'the disk tier is full or failing; serving from memory, writes dropped until space returns' : 'a disk tier operation failed',
        );
      this.#full ||= full;
      return undefined;
    }
  }

  /** A database found damaged while in use: set aside, and the tier starts again empty. */
  #reopen(why: unknown): void {
    // Closing ends the read transaction.
    clearImmediate(this.#reading);
    this.#reading = undefined;
    this.#db.close();
    this.#setAside(why);
    this.#db = this.#openAs();
    this.#s = this.#prepare();
  }

  /** Commits what is queued and closes the database; the directory is left to the next start. */
  close(): void {
    this.flush();
    this.#endReads();
    this.#db.close();
    this.#release();
  }
}

class ForeignLayout extends Error {
  constructor(version: number) {
    super(`the disk tier's database has layout version ${version}, not ${LAYOUT_VERSION}`);
  }
}

/** Whether a process with this pid is alive (one we may not signal is alive too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `gateway.cache.disk.path`, or the data directory's `cache/`. */
export function diskPath(config: Config): string {
  return resolve(config['gateway.cache.disk.path'] ?? resolve(config.dataDir, 'cache'));
}

const NOTHING_TO_RELEASE = (): void => undefined;

/**
 * Takes the directory for the gateway `owner` (this process, or its workers' primary): an `owner`
 * file holding its pid, made exclusively. One left by a gateway that is gone is taken over.
 * Returns what gives it up: only the owner's own process does (a worker leaves it to its primary).
 */
export function claim(dir: string, owner: number): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'owner');
  const release =
    owner !== process.pid
      ? NOTHING_TO_RELEASE
      : (): void => {
          try {
            if (Number(readFileSync(file, 'utf8')) === owner) rmSync(file, { force: true });
          } catch {
            // Gone already: nothing to give up.
          }
        };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(owner));
      closeSync(fd);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(file, 'utf8'));
    if (holder === owner) return release;
    if (Number.isInteger(holder) && holder > 0 && alive(holder)) throw new DiskTierInUse(dir, holder);
    rmSync(file, { force: true });
  }
  throw new DiskTierInUse(dir, Number(readFileSync(file, 'utf8')));
}
