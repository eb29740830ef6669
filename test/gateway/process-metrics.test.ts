/**
 * The process metrics on a real gateway's admin port: prom-client's default collectors, run one by
 * one so that the GC histogram can be left out (`gateway.metrics.gcDurations`), less the three
 * misnamed gauges.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

let origin: ScriptedOrigin;
let withGc: GatewayFixture;
let withoutGc: GatewayFixture;

before(async () => {
  origin = await startScriptedOrigin((_req, res) => {
    res.end('ok');
  });
  withGc = await startGatewayFixture(origin.url, { 'gateway.metrics.gcDurations': true });
  withoutGc = await startGatewayFixture(origin.url);
});

after(async () => {
  await Promise.all([withGc.stop(), withoutGc.stop()]);
  await origin.close();
});

/** The metric families a `/metrics` text declares. */
function families(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] ?? '').sort();
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

function defaultFamilies(): string[] {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry
    .getMetricsAsArray()
    .map((m) => m.name)
    .filter((n) => !/^nodejs_active_\w+_total$/.test(n))
    .sort();
}

test('gateway.metrics.gcDurations true exposes every prom-client default, the GC histogram among them, less the misnamed gauges', async () => {
  const exposed = families(await withGc.metrics());
  for (const name of defaultFamilies()) assert.ok(exposed.includes(name), `${name} is exposed`);
  assert.ok(!exposed.some((n) => /^nodejs_active_\w+_total$/.test(n)), 'no nodejs_active_*_total gauge');
  assert.ok(churn() > 0);
  // Node delivers the collections' entries to the observer in a later turn.
  await new Promise((resolve) => setImmediate(resolve));
  assert.match(await withGc.metrics(), /^nodejs_gc_duration_seconds_count\{kind="minor"\} [1-9]/m);
});

test('by default the GC histogram is left out and the rest of the defaults kept', async () => {
  const exposed = families(await withoutGc.metrics());
  for (const name of defaultFamilies()) {
    if (name === 'nodejs_gc_duration_seconds') assert.ok(!exposed.includes(name), 'no GC histogram');
    else assert.ok(exposed.includes(name), `${name} is exposed`);
  }
});
