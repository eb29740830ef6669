/**
 * The writable side of the catalog: loans, webhook registrations and the event outbox, on a
 * connection of their own (the search connection stays read-only, so no search path can write).
 * Every loan or return is one transaction that moves the copy, rewrites the book's availability
 * when it flips, and writes the resulting event for every registration into the outbox: the
 * event is durable exactly when the change is (the transactional outbox). The same transaction
 * appends the event to the event log, registrations or not, from which a gateway that was away
 * replays what it missed; the log keeps the newest `keptEvents`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { BOOK_ID, type BranchAvailability } from '../shared/api-types.ts';
import { assertSchemaVersion, EVENT_LOG_TABLE } from './catalog-schema.ts';

export const AVAILABILITY_CHANGED = 'book.availability.changed';
export const EVENT_TYPES: readonly string[] = [AVAILABILITY_CHANGED];

export interface Loan {
  readonly id: string;
  readonly book: string;
  readonly branch: string;
  readonly since: string;
}

export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly types: readonly string[];
  /** `disabled` once every delivery failed for the disable time; registering its URL again enables it. */
  readonly state: 'enabled' | 'disabled';
  /** Since when every delivery to it has failed (RFC 3339), while that is so. */
  readonly failingSince?: string;
  readonly disabledAt?: string;
}

/** A registration the origin stopped sending to, and the queued events it dropped. */
export interface Disabled {
  readonly webhookId: number;
  readonly dropped: number;
}

export interface AvailabilityChange {
  readonly book: string;
  readonly branch: string;
  readonly available: boolean;
}

export type LendResult =
  { readonly ok: true; readonly loan: Loan } | { readonly ok: false; readonly reason: 'unknown-book' | 'unknown-branch' | 'not-held' | 'none-free' };

/** One event due for delivery to one registration. */
export interface OutboxRow {
  readonly seq: number;
  /** The `webhook-id`: the same at every attempt, never the same for two events. */
  readonly messageId: string;
  readonly webhookId: number;
  readonly url: string;
  readonly secret: string;
  readonly payload: string;
  readonly createdMs: number;
  readonly attempts: number;
}

/** An event of the log as it was delivered: `id` is its `webhook-id`, `payload` its body. */
export interface LoggedEvent {
  readonly seq: number;
  readonly id: string;
  readonly payload: string;
}

/**
 * The log after a cursor: `last` is its newest seq (0 while empty). `expired` when events after
 * `after` are no longer kept, or `after` is past `last` (a cursor of another database's log).
 */
export type EventsAfter =
  | { readonly kind: 'events'; readonly events: readonly LoggedEvent[]; readonly last: number }
  | { readonly kind: 'expired'; readonly oldest: number | undefined; readonly last: number };

const LOAN_ID = /^ln_([1-9][0-9]{0,15})$/;
const WEBHOOK_ID = /^wh_([1-9][0-9]{0,15})$/;

/** The number in an id such as `bk_42`, or undefined when the id has another shape. */
export function idNumber(pattern: 'book' | 'loan' | 'webhook', id: string): number | undefined {
  const digits = { book: BOOK_ID, loan: LOAN_ID, webhook: WEBHOOK_ID }[pattern].exec(id)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

function asLoan(row: Record<string, unknown>): Loan {
  return { id: `ln_${String(row.id)}`, book: `bk_${String(row.book_id)}`, branch: row.branch_id as string, since: row.since as string };
}

function isoOf(ms: unknown): string | undefined {
  return typeof ms === 'number' ? new Date(ms).toISOString() : undefined;
}

function asWebhook(row: Record<string, unknown>): Webhook {
  const failingSince = isoOf(row.failing_since_ms);
  const disabledAt = isoOf(row.disabled_ms);
  return {
    id: `wh_${String(row.id)}`,
    url: row.url as string,
    types: JSON.parse(row.types as string) as string[],
    state: disabledAt === undefined ? 'enabled' : 'disabled',
    ...(failingSince === undefined ? {} : { failingSince }),
    ...(disabledAt === undefined ? {} : { disabledAt }),
  };
}

/** Columns a catalog built before registrations could be disabled lacks; added in place, as they start empty. */
const ADDED_WEBHOOK_COLUMNS = ['failing_since_ms', 'disabled_ms'];

/** Brings a catalog built by an earlier seeder up to this one's tables; what it gains starts empty. */
function migrate(db: DatabaseSync): void {
  const present = new Set(
    db
      .prepare('SELECT name FROM pragma_table_info(?)')
      .all('webhook')
      .map((row) => row.name),
  );
  for (const column of ADDED_WEBHOOK_COLUMNS) if (!present.has(column)) db.exec(`ALTER TABLE webhook ADD COLUMN ${column} INTEGER`);
  db.exec(EVENT_LOG_TABLE);
}

/** Deliveries in flight at once to one registration: a receiver that hangs holds no more of them. */
export const PER_RECEIVER = 4;

function prepareStatements(db: DatabaseSync) {
  const prepare = (sql: string): StatementSync => db.prepare(sql);
  return {
    bookExists: prepare('SELECT 1 AS x FROM book WHERE id = ?'),
    branchExists: prepare('SELECT 1 AS x FROM branch WHERE id = ?'),
    holding: prepare('SELECT copies, on_loan FROM holding WHERE book_id = ? AND branch_id = ?'),
    move: prepare('UPDATE holding SET on_loan = on_loan + :delta, available = (on_loan + :delta < copies) WHERE book_id = :book AND branch_id = :branch'),
    holdings: prepare('SELECT branch_id, available FROM holding WHERE book_id = ? ORDER BY branch_id'),
    availability: prepare('UPDATE book SET availability = ? WHERE id = ?'),
    insertLoan: prepare('INSERT INTO loan (book_id, branch_id, since) VALUES (?, ?, ?) RETURNING id, book_id, branch_id, since'),
    loan: prepare('SELECT id, book_id, branch_id, since FROM loan WHERE id = ? AND returned IS NULL'),
    endLoan: prepare('UPDATE loan SET returned = ? WHERE id = ? AND returned IS NULL RETURNING id, book_id, branch_id, since'),
    subscribers: prepare('SELECT w.id AS id FROM webhook w, json_each(w.types) t WHERE t.value = ? AND w.disabled_ms IS NULL'),
    enqueue: prepare('INSERT INTO outbox (message_id, webhook_id, book_id, payload, created_ms, due_ms) VALUES (?, ?, ?, ?, ?, ?)'),
    logEvent: prepare('INSERT INTO event_log (message_id, payload, created_ms) VALUES (?, ?, ?) RETURNING seq'),
    // A range of the rowid from its start: in the steady state it finds and deletes one row.
    pruneLog: prepare('DELETE FROM event_log WHERE seq <= ?'),
    // Apart, each min or max of the rowid is one step down the b-tree; together they scan the table.
    logBounds: prepare('SELECT (SELECT min(seq) FROM event_log) AS oldest, (SELECT max(seq) FROM event_log) AS last'),
    loggedAfter: prepare('SELECT seq, message_id, payload FROM event_log WHERE seq > ? ORDER BY seq LIMIT ?'),
    insertWebhook: prepare('INSERT INTO webhook (url, types, secret) VALUES (?, ?, ?) RETURNING id, url, types, failing_since_ms, disabled_ms'),
    webhooks: prepare('SELECT id, url, types, failing_since_ms, disabled_ms FROM webhook ORDER BY id'),
    webhook: prepare('SELECT id, url, types, failing_since_ms, disabled_ms FROM webhook WHERE id = ?'),
    webhookByUrl: prepare('SELECT id, url, types, secret FROM webhook WHERE url = ? ORDER BY id LIMIT 1'),
    enable: prepare(
      'UPDATE webhook SET types = ?, failing_since_ms = NULL, disabled_ms = NULL WHERE id = ? RETURNING id, url, types, failing_since_ms, disabled_ms',
    ),
    succeeded: prepare('UPDATE webhook SET failing_since_ms = NULL WHERE id = ? AND failing_since_ms IS NOT NULL'),
    failedSince: prepare('UPDATE webhook SET failing_since_ms = coalesce(failing_since_ms, ?) WHERE id = ? RETURNING failing_since_ms'),
    disable: prepare('UPDATE webhook SET disabled_ms = ? WHERE id = ? AND disabled_ms IS NULL'),
    dropQueued: prepare('DELETE FROM outbox WHERE webhook_id = ?'),
    deleteWebhook: prepare('DELETE FROM webhook WHERE id = ?'),
    // The oldest undelivered event of each (registration, book) pair: a later event of a book
    // waits until the earlier one is delivered, so a receiver sees a book's changes in order.
    // At most PER_RECEIVER of each registration, so that one receiver's backlog (a dead one's
    // retries) never fills the batch ahead of the others' events.
    due: prepare(`SELECT seq, message_id, webhook_id, url, secret, payload, created_ms, attempts FROM (
        SELECT o.seq AS seq, o.message_id AS message_id, o.webhook_id AS webhook_id, w.url AS url, w.secret AS secret, o.payload AS payload,
          o.created_ms AS created_ms, o.attempts AS attempts, row_number() OVER (PARTITION BY o.webhook_id ORDER BY o.seq) AS nth
        FROM outbox o JOIN webhook w ON w.id = o.webhook_id
        WHERE o.due_ms <= ? AND NOT EXISTS (
          SELECT 1 FROM outbox p WHERE p.webhook_id = o.webhook_id AND p.book_id = o.book_id AND p.seq < o.seq))
      WHERE nth <= ${PER_RECEIVER} ORDER BY seq LIMIT ?`),
    nextDue: prepare('SELECT min(due_ms) AS due FROM outbox'),
    delivered: prepare('DELETE FROM outbox WHERE seq = ?'),
    retryLater: prepare('UPDATE outbox SET attempts = attempts + 1, due_ms = ? WHERE seq = ?'),
    depth: prepare('SELECT count(*) AS n FROM outbox'),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class CirculationDb {
  readonly #db: DatabaseSync;
  readonly #now: () => number;
  readonly #statements: Statements;
  readonly #keptEvents: number;

  /** `keptEvents`: how many of the newest events the event log keeps (`origin.events.logSize`). */
  constructor(path: string, now: () => number, keptEvents: number) {
    this.#db = new DatabaseSync(path);
    assertSchemaVersion(this.#db, path);
    this.#now = now;
    // WAL lets searches on the read-only connection go on while a loan commits; NORMAL keeps a
    // commit durable against a process crash (not a power loss) without an fsync per loan.
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
    migrate(this.#db);
    this.#statements = prepareStatements(this.#db);
    this.#keptEvents = keptEvents;
  }

  #run<T>(work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }

  /** Lends one free copy of `book` at `branch`. */
  lend(book: number, branch: string): LendResult {
    return this.#run((): LendResult => {
      const s = this.#statements;
      if (s.bookExists.get(book) === undefined) return { ok: false, reason: 'unknown-book' };
      if (s.branchExists.get(branch) === undefined) return { ok: false, reason: 'unknown-branch' };
      const holding = s.holding.get(book, branch);
      if (holding === undefined) return { ok: false, reason: 'not-held' };
      if ((holding.on_loan as number) >= (holding.copies as number)) return { ok: false, reason: 'none-free' };
      const row = s.insertLoan.get(book, branch, new Date(this.#now()).toISOString());
      if (row === undefined) throw new Error('the loan was not inserted');
      this.#move(book, branch, 1);
      return { ok: true, loan: asLoan(row) };
    });
  }

  /** Ends a loan: its copy is back on the shelf. False when there is no such active loan. */
  giveBack(loan: number): boolean {
    return this.#run(() => {
      const row = this.#statements.endLoan.get(new Date(this.#now()).toISOString(), loan);
      if (row === undefined) return false;
      this.#move(row.book_id as number, row.branch_id as string, -1);
      return true;
    });
  }

  loan(id: number): Loan | undefined {
    const row = this.#statements.loan.get(id);
    return row === undefined ? undefined : asLoan(row);
  }

  /** Moves one copy out (+1) or back (-1); when that flips `available`, records the event. */
  #move(book: number, branch: string, delta: 1 | -1): void {
    const s = this.#statements;
    const before = s.holding.get(book, branch);
    s.move.run({ delta, book, branch });
    const after = s.holding.get(book, branch);
    if (before === undefined || after === undefined) throw new Error('the holding vanished inside its transaction');
    const wasAvailable = (before.on_loan as number) < (before.copies as number);
    const isAvailable = (after.on_loan as number) < (after.copies as number);
    if (wasAvailable === isAvailable) return;
    const availability: BranchAvailability[] = s.holdings.all(book).map((h) => ({ branch: h.branch_id as string, available: h.available === 1 }));
    s.availability.run(JSON.stringify(availability), book);
    const now = this.#now();
    const change: AvailabilityChange = { book: `bk_${book}`, branch, available: isAvailable };
    const payload = JSON.stringify({ type: AVAILABILITY_CHANGED, timestamp: new Date(now).toISOString(), data: change });
    // One message id for every registration (Standard Webhooks' message, sent to each endpoint):
    // hosts of a fleet that each receive it recognise it as one event.
    const messageId = `msg_${randomUUID()}`;
    for (const subscriber of s.subscribers.all(AVAILABILITY_CHANGED)) s.enqueue.run(messageId, subscriber.id as number, book, payload, now, now);
    const seq = s.logEvent.get(messageId, payload, now)?.seq;
    if (typeof seq !== 'number') throw new Error('the event was not logged');
    s.pruneLog.run(seq - this.#keptEvents);
  }

  /** Up to `limit` logged events after seq `after`, in order; undefined `after` asks only where the log stands. */
  eventsAfter(after: number | undefined, limit: number): EventsAfter {
    const s = this.#statements;
    const bounds = s.logBounds.get();
    const oldest = typeof bounds?.oldest === 'number' ? bounds.oldest : undefined;
    const last = typeof bounds?.last === 'number' ? bounds.last : 0;
    if (after === undefined) return { kind: 'events', events: [], last };
    // After `oldest - 1` nothing is missing; before it, the events in between were pruned.
    if (after > last || (oldest !== undefined && after < oldest - 1)) return { kind: 'expired', oldest, last };
    const events = s.loggedAfter.all(after, limit).map((row) => ({ seq: row.seq as number, id: row.message_id as string, payload: row.payload as string }));
    return { kind: 'events', events, last };
  }

  /**
   * Registers a receiver, or, when its URL is registered already, answers that registration,
   * enabled again and with `types` (`created` false): the replicas of a fleet behind one public
   * URL share one registration, and a receiver that is back ends its disabling. The secret is
   * returned only here.
   */
  register(url: string, types: readonly string[]): Webhook & { readonly secret: string; readonly created: boolean } {
    return this.#run(() => {
      const s = this.#statements;
      const known = s.webhookByUrl.get(url);
      if (known !== undefined) {
        const row = s.enable.get(JSON.stringify(types), known.id as number);
        if (row === undefined) throw new Error('the webhook vanished inside its transaction');
        return { ...asWebhook(row), secret: known.secret as string, created: false };
      }
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const row = s.insertWebhook.get(url, JSON.stringify(types), secret);
      if (row === undefined) throw new Error('the webhook was not inserted');
      return { ...asWebhook(row), secret, created: true };
    });
  }

  /** A delivery to `webhookId` succeeded: it is not failing any more. */
  deliveredTo(webhookId: number): void {
    this.#statements.succeeded.run(webhookId);
  }

  /**
   * A delivery to `webhookId` failed at `now`. When every delivery to it has failed for
   * `disableAfterMs`, it is disabled and its queued events dropped: returned so, else undefined.
   */
  failedTo(webhookId: number, now: number, disableAfterMs: number): Disabled | undefined {
    return this.#run(() => {
      const s = this.#statements;
      const since = s.failedSince.get(now, webhookId)?.failing_since_ms;
      if (typeof since !== 'number' || now - since < disableAfterMs) return undefined;
      if (Number(s.disable.run(now, webhookId).changes) === 0) return undefined;
      return { webhookId, dropped: Number(s.dropQueued.run(webhookId).changes) };
    });
  }

  webhooks(): Webhook[] {
    return this.#statements.webhooks.all().map(asWebhook);
  }

  webhook(id: number): Webhook | undefined {
    const row = this.#statements.webhook.get(id);
    return row === undefined ? undefined : asWebhook(row);
  }

  /** Removes a registration and the events still queued for it. */
  unregister(id: number): boolean {
    return Number(this.#statements.deleteWebhook.run(id).changes) > 0;
  }

  /** Up to `limit` events due now, each the oldest undelivered one of its book for its receiver. */
  due(limit: number): OutboxRow[] {
    return this.#statements.due.all(this.#now(), limit).map((row) => ({
      seq: row.seq as number,
      messageId: row.message_id as string,
      webhookId: row.webhook_id as number,
      url: row.url as string,
      secret: row.secret as string,
      payload: row.payload as string,
      createdMs: row.created_ms as number,
      attempts: row.attempts as number,
    }));
  }

  /** Milliseconds since the epoch when the next queued event is due, if any. */
  nextDue(): number | undefined {
    const due = this.#statements.nextDue.get()?.due;
    return typeof due === 'number' ? due : undefined;
  }

  delivered(seq: number): void {
    this.#statements.delivered.run(seq);
  }

  retryAt(seq: number, dueMs: number): void {
    this.#statements.retryLater.run(dueMs, seq);
  }

  get outboxDepth(): number {
    return Number(this.#statements.depth.get()?.n ?? 0);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
