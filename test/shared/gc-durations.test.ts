/**
 * The GC histogram read from V8's GC profiler (gc-durations.ts), and the process metrics around it:
 * every collection is counted by kind, each registry reads the process's one histogram, and the
 * default collectors run one by one still give every metric prom-client's defaults give.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parsePrometheusText } from '../../src/loadtest/prometheus-text.ts';
import { collectGcDurations } from '../../src/shared/gc-durations.ts';
import { collectProcessMetrics } from '../../src/shared/process-metrics.ts';

async function sample(registry: Registry, name: string, kind: string): Promise<number> {
  return parsePrometheusText(await registry.metrics()).value(name, { kind }) ?? 0;
}

/** Makes about 100 MB of short-lived objects, held a moment so no optimiser can drop them: young-generation collections. */
function churn(): number {
  let held: { i: number }[] = [];
  let count = 0;
  for (let i = 0; i < 2_000_000; i++) {
    held.push({ i });
    if (held.length === 10_000) {
      count += held.length;
      held = [];
    }
  }
  return count;
}

test('young-generation collections are counted and timed under kind="minor"', async () => {
  const registry = new Registry();
  collectGcDurations(registry);
  const before = await sample(registry, 'nodejs_gc_duration_seconds_count', 'minor');
  const sumBefore = await sample(registry, 'nodejs_gc_duration_seconds_sum', 'minor');
  assert.ok(churn() > 0);
  const after = await sample(registry, 'nodejs_gc_duration_seconds_count', 'minor');
  const sumAfter = await sample(registry, 'nodejs_gc_duration_seconds_sum', 'minor');
  assert.ok(after > before, `minor collections counted: ${before} → ${after}`);
  assert.ok(sumAfter > sumBefore && sumAfter - sumBefore < 10, `their time in seconds: ${sumBefore} → ${sumAfter}`);
});

test('every registry reads the same process-wide histogram', async () => {
  const a = new Registry();
  const b = new Registry();
  collectGcDurations(a);
  churn();
  collectGcDurations(b);
  assert.equal(await sample(a, 'nodejs_gc_duration_seconds_count', 'minor'), await sample(b, 'nodejs_gc_duration_seconds_count', 'minor'));
});

test('the process metrics are prom-client\'s defaults, less the three misnamed gauges', () => {
  const ours = new Registry();
  collectProcessMetrics(ours, 'test');
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const names = (registry: Registry) => registry.getMetricsAsArray().map((m) => m.name).sort();
  const expected = names(defaults).filter((n) => !n.startsWith('nodejs_active_') || !n.endsWith('_total'));
  assert.deepEqual(names(ours).filter((n) => n !== 'test_build_info'), expected);
});
