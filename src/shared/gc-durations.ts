/**
 * `nodejs_gc_duration_seconds`, the histogram prom-client's default collectors make, read from
 * V8's GC profiler (`v8.GCProfiler`) instead of a `gc` PerformanceObserver. Node makes every `gc`
 * performance entry with deprecated accessors for its fields, two functions and a prototype change
 * each, and V8 puts those maps and closures straight in the old generation: under cache hits,
 * at about 60 scavenges a second, that was nearly everything a gateway promoted (4.4–4.9 KB a
 * scavenge against 0.2–0.4 KB without the observer), and the full collection it brought every
 * 20 s or so, its concurrent marking and sweeping time-sliced with the requests on a busy core,
 * set the hit path's p99 (docs/performance.md, "What set the identity rows' tail").
 *
 * The profiler records each collection in native memory; its record is taken every DRAIN_MS and
 * at every scrape. One histogram serves the whole process (collections are the process's, not a
 * server's), registered in each registry that asks for it.
 */
import { GCProfiler } from 'node:v8';
import { Histogram, type Registry } from 'prom-client';

/** prom-client's labels for V8's collection types (Node's names for them in the profiler's record). */
const KINDS: Readonly<Record<string, string>> = {
  Scavenge: 'minor',
  MinorMarkSweep: 'minor',
  MarkSweepCompact: 'major',
  IncrementalMarking: 'incremental',
  ProcessWeakCallbacks: 'weakcb',
};

/** prom-client's buckets for this histogram, so that dashboards built on its default read the same. */
const BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

/**
 * How often the record is taken between scrapes. Each collection's entry is about 4 KB of JSON (the
 * heap's statistics before and after), so this keeps one record to some 30 collections at the
 * rate of a busy server, parsed while young, and an unscraped process's native memory bounded.
 */
const DRAIN_MS = 500;

function started(): GCProfiler {
  const profiler = new GCProfiler();
  profiler.start();
  return profiler;
}

let histogram: Histogram<'kind'> | undefined;

function create(): Histogram<'kind'> {
  let profiler = started();
  const made = new Histogram({
    name: 'nodejs_gc_duration_seconds',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: BUCKETS,
    registers: [],
    collect: drain,
  });
  function drain(): void {
    // The next profiler starts before this one stops, so no collection falls between them.
    const next = started();
    const { statistics } = profiler.stop();
    profiler = next;
    for (const { gcType, cost } of statistics) made.observe({ kind: KINDS[gcType] ?? gcType }, cost / 1e6);
  }
  setInterval(drain, DRAIN_MS).unref();
  return made;
}

/** Adds the process's GC duration histogram to `registry`. */
export function collectGcDurations(registry: Registry): void {
  histogram ??= create();
  registry.registerMetric(histogram);
}
