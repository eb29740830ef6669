/**
 * Where both servers' log lines go: a block of memory filled line by line and written with one
 * synchronous `write(2)` when it is full, when it has waited `flushEveryMs`, when the process
 * exits (normally, by a signal handler's `process.exit`, or by an uncaught error), and before a
 * reopen. nginx's `access_log … buffer=64k flush=…` does the same.
 *
 * Why not pino's own destination: it writes each 4 KiB block asynchronously from libuv's thread
 * pool, and on this project's 2-core benchmark machine the thread-pool hop of every block plus
 * `Buffer.byteLength` of every line cost more than the rest of a cache hit's logging put together
 * (docs/performance.md). A synchronous write of 64 KiB to the page cache took 12–25 µs on the
 * disks measured, a tenth of a microsecond or less per access line.
 *
 * A line may also be handed over unmade (`defer`: what it is about and how to make it), as the
 * access log does: such lines are made together at the end of the event loop's turn, or before
 * the next line taken whole, so they keep their order with every other line. Made one at a time
 * between requests, access lines cost a cache hit about 1 µs more of CPU than the same lines made
 * in a run (docs/performance.md, "Access lines made at the end of the turn"): the code that makes
 * them stays warm in the processor's caches for the run instead of being fetched again for each.
 *
 * Blocks hold whole lines only. To a regular file (opened `O_APPEND`) a block of any size lands in
 * one piece; to a pipe or a terminal a block is at most PIPE_BUF (4 KiB), so lines of several
 * workers sharing one stdout never interleave. A reader that does not keep up (a full pipe) holds
 * the server up rather than losing lines.
 */
import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { wallClock } from './turn-clock.ts';

export interface LogSinkOptions {
  /** `stdout`, or a file path lines are appended to (its directory is made when missing). */
  readonly destination: string;
  /** Bytes gathered before a write, for a regular file. */
  readonly blockBytes?: number;
  /** The longest a line waits in memory on a quiet server. */
  readonly flushEveryMs?: number;
}

/** POSIX guarantees at least 512; Linux pipes keep writes up to 4096 bytes whole. */
const PIPE_BUF = 4096;
const UTF8_MAX_BYTES_PER_UNIT = 3;
/** Lines waiting to be made at most: a longer turn of the event loop makes them as this fills. */
const MOST_DEFERRED = 256;

/** Makes a deferred line (newline included) from what it is about and the time it was handed over (ms since the epoch). */
export type LineMaker<T> = (item: T, at: number) => string;
const retryPause = new Int32Array(new SharedArrayBuffer(4));

/** Every open sink, so that exit flushes them and a signal reopens their files. */
const sinks = new Set<LogSink>();
process.on('exit', () => {
  for (const sink of sinks) sink.flush();
});

/** Reopens every log file by its path (after logrotate moved it away), as nginx does on SIGUSR1. */
export function reopenLogFiles(): void {
  for (const sink of sinks) sink.reopen();
}

export class LogSink {
  readonly #path: string | undefined;
  #fd: number;
  readonly #block: Buffer;
  #used = 0;
  #lastFailure: string | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #items: unknown[] = [];
  readonly #makers: LineMaker<never>[] = [];
  readonly #times = new Float64Array(MOST_DEFERRED);
  #deferred = 0;
  #makeScheduled = false;
  readonly #makeDeferred = (): void => {
    this.#makeScheduled = false;
    this.#make();
  };

  constructor(options: LogSinkOptions) {
    this.#path = options.destination === 'stdout' ? undefined : options.destination;
    this.#fd = this.#open();
    const wanted = options.blockBytes ?? 64 * 1024;
    this.#block = Buffer.allocUnsafeSlow(fstatSync(this.#fd).isFile() ? wanted : Math.min(wanted, PIPE_BUF));
    this.#timer = setInterval(() => {
      this.flush();
    }, options.flushEveryMs ?? 200).unref();
    sinks.add(this);
  }

  /** Takes one finished line (newline included), as pino hands its lines to a destination. */
  write(line: string): void {
    if (this.#deferred > 0) this.#make();
    this.#append(line);
  }

  /**
   * Takes a line to be made by `make(item, at)` at the end of this turn of the event loop, or
   * sooner when another line comes or the sink is flushed; `at` is now. `item` is kept until then,
   * so it must not change.
   */
  defer<T>(item: T, make: LineMaker<T>): void {
    const n = this.#deferred++;
    this.#items[n] = item;
    this.#makers[n] = make;
    this.#times[n] = wallClock();
    if (this.#deferred === MOST_DEFERRED) this.#make();
    else if (!this.#makeScheduled) {
      this.#makeScheduled = true;
      setImmediate(this.#makeDeferred);
    }
  }

  /**
   * Makes the deferred lines and copies them into the block a run at a time: the lines that fit
   * together in what is left of it, joined, then copied with one call. Each copy into a Buffer is a
   * call into C++ that flattens its string first; one per line cost an access line about 0.1 µs more.
   */
  #make(): void {
    const count = this.#deferred;
    // Counted out first: a line that fails to be made must not be made again by the next write.
    this.#deferred = 0;
    const items = this.#items;
    const makers = this.#makers;
    let run = '';
    try {
      for (let i = 0; i < count; i++) {
        const item = items[i] as never;
        items[i] = undefined;
        const line = (makers[i] as LineMaker<never>)(item, this.#times[i] ?? 0);
        if (run !== '' && !this.#fits(run.length + line.length)) {
          this.#append(run);
          run = '';
        }
        run += line;
      }
    } finally {
      // The lines made before one that failed are kept.
      if (run !== '') this.#append(run);
    }
  }

  /** Whether `length` UTF-16 units of text surely fit in what is left of the block. */
  #fits(length: number): boolean {
    return this.#used + length * UTF8_MAX_BYTES_PER_UNIT <= this.#block.length;
  }

  #append(line: string): void {
    if (!this.#fits(line.length)) {
      this.flush();
      if (line.length * UTF8_MAX_BYTES_PER_UNIT > this.#block.length) {
        this.#writeAll(Buffer.from(line));
        return;
      }
    }
    this.#used += this.#block.write(line, this.#used);
  }

  flush(): void {
    if (this.#deferred > 0) this.#make();
    if (this.#used === 0) return;
    const used = this.#used;
    this.#used = 0;
    this.#writeAll(this.#block.subarray(0, used));
  }

  /** Writes what is gathered to the old file, then opens the path anew. */
  reopen(): void {
    if (this.#path === undefined) return;
    this.flush();
    const old = this.#fd;
    this.#fd = this.#open();
    closeSync(old);
  }

  /** Flushes and lets go of the file (tests; a process that exits needs no call). */
  close(): void {
    this.flush();
    clearInterval(this.#timer);
    sinks.delete(this);
    if (this.#path !== undefined) closeSync(this.#fd);
  }

  #open(): number {
    if (this.#path === undefined) return 1;
    mkdirSync(dirname(this.#path), { recursive: true });
    return openSync(this.#path, 'a');
  }

  /**
   * A destination that cannot be written (disk full, file system gone) must not take the server
   * down with it, as nginx carries on: the block is dropped and stderr says so, once per kind of
   * failure.
   */
  #failed(err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code === this.#lastFailure) return;
    this.#lastFailure = code;
    try {
      writeSync(2, `log destination ${this.#path ?? 'stdout'} failed (${code}); log lines are being dropped\n`);
    } catch {
      // stderr is gone too: nothing left to tell.
    }
  }

  #writeAll(bytes: Buffer): void {
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
        this.#lastFailure = undefined;
      } catch (err) {
        // A non-blocking pipe that is full: wait for the reader rather than drop lines.
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(retryPause, 0, 0, 1);
          continue;
        }
        this.#failed(err);
        return;
      }
    }
  }
}
