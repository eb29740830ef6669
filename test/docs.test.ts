/** The README documents what the code does: every config key and every catalog metric. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { configTable } from '../src/config/config-table.ts';
import { SCHEMA } from '../src/config/schema.ts';
import { EventMetrics } from '../src/gateway/events/event-metrics.ts';
import { FleetMetrics } from '../src/gateway/fleet/fleet-metrics.ts';
import { GatewayMetrics } from '../src/gateway/metrics.ts';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';
import { OriginMetrics } from '../src/origin/metrics.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

async function catalogMetricNames(registry: Registry): Promise<string[]> {
  const families = await registry.getMetricsAsJSON();
  return families.map((f) => f.name).filter((name) => name.startsWith('catalog_'));
}

describe('README', () => {
  test('shows the test command that .ci/run runs', () => {
    assert.match(readme, /^npm test\b/m);
    assert.match(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8'), /^npm test$/m);
  });

  test('npm start and the bin run the gateway with the same V8 flags as the loadtest and the bench', () => {
    const flags = GATEWAY_NODE_FLAGS.join(' ');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, `node ${flags} bin/catalog-gateway.js start`);
    const shebang = readFileSync(new URL('../bin/catalog-gateway.js', import.meta.url), 'utf8').split('\n')[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${flags}`);
  });

  test('its configuration table is the one the schema generates (`npm run docs` rewrites it)', () => {
    assert.ok(readme.includes(configTable()), 'README.md has a stale configuration table: run `npm run docs`');
    for (const key of Object.keys(SCHEMA)) assert.ok(readme.includes(`| \`${key}\` |`), `README lacks ${key}`);
  });

  test('lists every metric of the gateway and the origin', async () => {
    const gateway = new Registry();
    const origin = new Registry();
    new GatewayMetrics(gateway, { cache: () => ({ entries: 0, bytes: 0 }), inFlight: () => 0, originUp: () => true });
    new FleetMetrics(gateway, () => true, () => false);
    new EventMetrics(gateway);
    new OriginMetrics(origin, () => 0);
    const names = [...(await catalogMetricNames(gateway)), ...(await catalogMetricNames(origin))];
    assert.ok(names.length >= 11);
    for (const name of names) assert.ok(readme.includes(`\`${name}`), `README does not list ${name}`);
  });
});
