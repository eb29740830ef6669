/**
 * A server's garbage collections as V8 prints them with `--trace-gc`, one line each on the
 * server's stdout, which the bench sends to a file. The bench counts them there and not from the
 * server's own `nodejs_gc_duration_seconds`: observing collections is what made a hit-serving
 * gateway collect its whole heap in nearly every run (docs/performance.md, "The GC histogram off
 * by default"), and a gateway measured with the histogram on would not be the one that ships.
 *
 * A line reads `[pid:isolate]  1234 ms: Scavenge 32.3 (46.3) -> 25.9 (46.3) MB, pooled: 0 MB,
 * 0.42 / 0.00 ms  (…) task;`; a full collection is `Mark-Compact`, with `(+ 1.3 ms in 32 steps
 * since start of marking, …)` for the incremental marking done on the main thread before its pause.
 * Every process of a server writes to the same file (a cluster's workers inherit the primary's
 * stdout), so the figures are the server's, as its CPU time is.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface GcPauses {
  /** Collections: young-generation (scavenges) and full ones. */
  readonly count: number;
  /** Their pauses, with the incremental marking steps of the full ones, in ms. */
  readonly totalMs: number;
  /**
   * Full (mark-compact) collections among them: on a server pinned to one core, V8's concurrent
   * marking and sweeping take the core from the requests, and a run with one reads a longer tail
   * (docs/performance.md, "How to measure").
   */
  readonly full: number;
}

const COLLECTION = /: (Scavenge|Minor Mark-Sweep|Mark-Compact)\b.*? MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(?: +\(\+ ([\d.]+) ms in \d+ steps)?/;

/** The collections of one line of `--trace-gc` output; undefined for any other line. */
export function parseGcLine(line: string): { readonly full: boolean; readonly ms: number } | undefined {
  const m = COLLECTION.exec(line);
  if (m === null) return undefined;
  return { full: m[1] === 'Mark-Compact', ms: Number(m[2]) + Number(m[3] ?? 0) };
}

/** Where every trace is read into: reads are synchronous, so one buffer serves them all. */
const CHUNK = Buffer.allocUnsafe(1 << 20);

/** Totals since the server started, read on from where the last read stopped. */
export class GcTrace {
  readonly #file: string;
  #offset = 0;
  /** The start of a line still being written when the file was last read. */
  #partial = '';
  #count = 0;
  #totalMs = 0;
  #full = 0;

  constructor(file: string) {
    this.#file = file;
  }

  read(): GcPauses {
    const fd = openSync(this.#file, 'r');
    try {
      let n: number;
      while ((n = readSync(fd, CHUNK, 0, CHUNK.length, this.#offset)) > 0) {
        this.#offset += n;
        const lines = (this.#partial + CHUNK.toString('latin1', 0, n)).split('\n');
        this.#partial = lines.pop() ?? '';
        for (const line of lines) this.#add(line);
      }
    } finally {
      closeSync(fd);
    }
    return { count: this.#count, totalMs: this.#totalMs, full: this.#full };
  }

  #add(line: string): void {
    const collection = parseGcLine(line);
    if (collection === undefined) return;
    this.#count++;
    this.#totalMs += collection.ms;
    if (collection.full) this.#full++;
  }
}
