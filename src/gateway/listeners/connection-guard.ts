/**
 * What one HTTP/2 client connection may cost the listener, and for how long, past what nghttp2
 * bounds itself (streams at once, header list size, flood of control frames):
 *
 *   preface        a connection has `http.headersTimeoutMs` to send its preface (the magic and its
 *                  SETTINGS), as a TLS client has for its handshake; bytes that are no preface get
 *                  GOAWAY PROTOCOL_ERROR (RFC 9113 §3.4), where Node would send INTERNAL_ERROR.
 *   bad frames     a connection nghttp2 ends for what the client sent (a stream made to depend on
 *                  itself, a malformed frame, a CONTINUATION flood) is counted, and a flood gets
 *                  ENHANCE_YOUR_CALM where Node would send INTERNAL_ERROR.
 *   resets         rapid-reset.ts: a stream that ended before its answer, past a rate, ends the
 *                  connection with ENHANCE_YOUR_CALM.
 *   send deadline  an answer with bytes queued that sends none of them for
 *                  `http.http2.sendTimeoutMs` (the client gives its stream no flow-control window)
 *                  is reset (CANCEL), and a connection whose socket cannot write what it holds for
 *                  as long (the client reads nothing) is closed: nginx's `send_timeout`.
 *   budget         while a connection holds more than `http.http2.maxQueuedBytes` of answers
 *                  unsent, its new streams are refused with REFUSED_STREAM, which tells the
 *                  client it may retry them (RFC 9113 §8.7).
 *   idle           a connection that neither reads nor writes a byte for `http.requestTimeoutMs`
 *                  is closed, as Node's own session timeout would close it. Node's timer is
 *                  stopped as each session starts: it is refreshed on every read and write (about
 *                  0.3 µs of CPU a hit), and Node (24.21) leaves it armed once the session has
 *                  closed (its close asks `setTimeout(0)` after marking the session destroyed,
 *                  which makes that call do nothing), so that every closed session, its socket's
 *                  objects and their listeners stayed reachable until the timer fired, 30 s later:
 *                  26 MB of old space after a burst of 7,800 new TLS connections, marked again by
 *                  every full collection meanwhile (docs/performance.md).
 *
 * So a client that stops reading costs a bounded number of bytes for a bounded time. Progress is
 * read from a stream's unsent bytes (its `writableLength`, which falls as each write goes whole to
 * the connection), the bytes its socket holds unwritten and the bytes it has read and written, by a
 * sweep a few times per deadline: the request path only adds its stream to the connection's table,
 * slots rather than a Set (../../shared/slot-table.ts), so that a stream is not kept for the young
 * collector by a hash table the Set gave up.
 */
import { constants, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { Http2Refusal, Http2Refusals } from './http2-refusals.ts';
import { calmDown, endedEarly, ResetRate } from './rapid-reset.ts';
import { unwrittenBytes } from '../../shared/node-http-internals.ts';
import { SlotTable } from '../../shared/slot-table.ts';

/**
 * nghttp2's errors (the `errno` of the error Node destroys a session with; not among
 * `http2.constants`) that a client's bytes cause: what each counts as, and the GOAWAY code it gets.
 * Where nghttp2 has sent its own GOAWAY first (NGHTTP2_ERR_PROTO: a self-dependency, a frame of the
 * wrong size), that one, with its precise code, is the one the client reads.
 */
const CLIENT_ERRORS: ReadonlyMap<number, readonly [Http2Refusal, number]> = new Map([
  [-505, ['protocol-error', constants.NGHTTP2_PROTOCOL_ERROR]], // NGHTTP2_ERR_PROTO
  [-903, ['bad-preface', constants.NGHTTP2_PROTOCOL_ERROR]], // NGHTTP2_ERR_BAD_CLIENT_MAGIC
  [-904, ['flood', constants.NGHTTP2_ENHANCE_YOUR_CALM]], // NGHTTP2_ERR_FLOODED
  [-905, ['flood', constants.NGHTTP2_ENHANCE_YOUR_CALM]], // NGHTTP2_ERR_TOO_MANY_CONTINUATIONS
]);

export interface GuardLimits {
  readonly prefaceTimeoutMs: number;
  readonly sendTimeoutMs: number;
  /** A connection silent both ways for this long is closed. */
  readonly idleTimeoutMs: number;
  readonly maxQueuedBytes: number;
  readonly maxResetsPerSecond: number;
}

/** Unsent bytes of a stream at the last sweep, and since when none went out. */
interface Stall {
  pending: number;
  since: number;
}

/** One connection as the guard watches it (`ConnectionGuard.watch`). */
export class Connection {
  readonly session: ServerHttp2Session;
  readonly remoteAddress: string | undefined;
  /**
   * Open streams, each with its stall while its answer has bytes unsent at a sweep; one the guard
   * itself resets is taken out first, so that its reset is not the client's.
   */
  readonly streams = new SlotTable<ServerHttp2Stream, Stall | undefined>();
  readonly resets: ResetRate;
  /** Over its byte budget at the last sweep: new streams are refused. */
  overBudget = false;
  /**
   * The one 'close' listener of all its streams, which the emitter calls with the stream as
   * `this`: a closure per stream would be made, kept while the stream lives and collected, on
   * every request.
   */
  readonly onStreamClose: (this: ServerHttp2Stream) => void;
  /** What the socket held unwritten at the last sweep, and when it last wrote some or held none. */
  unwritten = 0;
  writtenAt: number;
  /** Bytes the connection had read and written at the last sweep, and when that last changed. */
  moved = 0;
  movedAt: number;

  /** `tooManyResets` is called when a stream that ended early is one too many within the window. */
  constructor(
    session: ServerHttp2Session,
    maxResetsPerSecond: number,
    now: number,
    tooManyResets: (session: ServerHttp2Session, remoteAddress: string | undefined) => void,
  ) {
    const remoteAddress = session.socket.remoteAddress;
    this.session = session;
    this.remoteAddress = remoteAddress;
    this.resets = new ResetRate(maxResetsPerSecond);
    this.writtenAt = now;
    this.movedAt = now;
    const { streams, resets } = this;
    this.onStreamClose = function (this: ServerHttp2Stream): void {
      if (!streams.delete(this) || session.destroyed || !endedEarly(this)) return;
      if (resets.exceeded(performance.now())) tooManyResets(session, remoteAddress);
    };
  }
}

export class ConnectionGuard {
  #limits: GuardLimits;
  readonly #refusals: Http2Refusals;
  readonly #onRapidReset: () => void;
  readonly #connections = new Set<Connection>();
  readonly #sweep: NodeJS.Timeout;

  constructor(limits: GuardLimits, refusals: Http2Refusals, onRapidReset: () => void) {
    this.#limits = limits;
    this.#refusals = refusals;
    this.#onRapidReset = onRapidReset;
    this.#sweep = this.#schedule();
  }

  /** Limits for the connections accepted from now on, and for every connection's streams from the next sweep. */
  applyLimits(limits: GuardLimits): void {
    this.#limits = limits;
  }

  stop(): void {
    clearInterval(this.#sweep);
  }

  /**
   * Watches `stream`, new on `connection`, until it closes; or refuses it (REFUSED_STREAM) when the
   * connection was over its byte budget at the last sweep, and returns false: the request is then
   * to be left alone. Called by the listener's own 'stream' listener, one per connection.
   */
  admits(connection: Connection, stream: ServerHttp2Stream): boolean {
    if (connection.overBudget) {
      this.#refusals.refused('queue-full', 'stream', connection.remoteAddress);
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      return false;
    }
    connection.streams.set(stream, undefined);
    // 'close' comes once: `on` spares every stream the wrapper `once` would make.
    stream.on('close', connection.onStreamClose);
    return true;
  }

  /** A sweep reads progress a few times per deadline (the first ones'), so that a stalled answer or a silent connection is cut within a quarter of it past the deadline. */
  #schedule(): NodeJS.Timeout {
    const { sendTimeoutMs, idleTimeoutMs } = this.#limits;
    return setInterval(
      () => {
        this.#check();
      },
      Math.min(1000, Math.max(25, Math.floor(Math.min(sendTimeoutMs, idleTimeoutMs) / 4))),
    ).unref();
  }

  /** Guards `session`, a connection just accepted; its streams are handed to `admits`. */
  watch(session: ServerHttp2Session): Connection {
    const { prefaceTimeoutMs, maxResetsPerSecond } = this.#limits;
    const connection = new Connection(session, maxResetsPerSecond, performance.now(), this.#calmDown);
    this.#connections.add(connection);
    // The idle deadline is the sweep's (above).
    session.setTimeout(0);
    const preface = setTimeout(() => {
      this.#refusals.refused('preface-timeout', 'connection', connection.remoteAddress);
      session.destroy();
    }, prefaceTimeoutMs);
    session.once('remoteSettings', () => {
      clearTimeout(preface);
    });
    session.once('close', () => {
      clearTimeout(preface);
      this.#connections.delete(connection);
    });
    // Node ends a session on nghttp2's error by destroying it with that error and no code, which
    // becomes INTERNAL_ERROR in the GOAWAY; where the error is the client's, the code says so.
    const destroy = session.destroy.bind(session);
    session.destroy = (error?: Error, code?: number): void => {
      const known = code === undefined ? CLIENT_ERRORS.get((error as { errno?: number } | undefined)?.errno ?? 0) : undefined;
      if (known === undefined) {
        destroy(error, code);
        return;
      }
      this.#refusals.refused(known[0], 'connection', connection.remoteAddress);
      destroy(error, known[1]);
    };
    return connection;
  }

  readonly #calmDown = (session: ServerHttp2Session, remoteAddress: string | undefined): void => {
    this.#onRapidReset();
    this.#refusals.refused('rapid-reset', 'connection', remoteAddress);
    calmDown(session);
  };

  /** Resets `stream`, whose answer sent nothing for the send deadline. */
  #cut(connection: Connection, stream: ServerHttp2Stream): void {
    connection.streams.delete(stream);
    this.#refusals.refused('send-timeout', 'stream', connection.remoteAddress);
    stream.close(constants.NGHTTP2_CANCEL);
  }

  #check(): void {
    const now = performance.now();
    const { sendTimeoutMs, idleTimeoutMs, maxQueuedBytes } = this.#limits;
    for (const connection of this.#connections) {
      const { session } = connection;
      if (session.destroyed) continue;
      const { socket } = session;
      const moved = socket.bytesRead + socket.bytesWritten;
      if (moved !== connection.moved) {
        connection.moved = moved;
        connection.movedAt = now;
      } else if (now - connection.movedAt >= idleTimeoutMs) {
        session.destroy();
        continue;
      }
      const unwritten = unwrittenBytes(socket);
      // Counted from the first sweep that sees bytes held, as a stream's stall is: never cut before the deadline.
      if (unwritten === 0 || connection.unwritten === 0 || unwritten < connection.unwritten) connection.writtenAt = now;
      connection.unwritten = unwritten;
      if (now - connection.writtenAt >= sendTimeoutMs) {
        this.#refusals.refused('send-timeout', 'connection', connection.remoteAddress);
        session.destroy();
        continue;
      }
      let queued = 0;
      const expired: ServerHttp2Stream[] = [];
      const { streams } = connection;
      streams.forEach((stall, stream) => {
        const pending = stream.writableLength;
        queued += pending;
        if (pending === 0) {
          if (stall !== undefined) streams.set(stream, undefined);
        } else if (stall === undefined || pending < stall.pending) {
          streams.set(stream, { pending, since: now });
        } else {
          stall.pending = pending;
          if (now - stall.since >= sendTimeoutMs) expired.push(stream);
        }
      });
      connection.overBudget = queued > maxQueuedBytes;
      for (const stream of expired) this.#cut(connection, stream);
    }
  }
}
