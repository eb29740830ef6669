/** The docs document what the code does: every config key and every catalog metric. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { configTable } from '../src/config/config-table.ts';
import { defaultFile } from '../src/config/default-file.ts';
import { DEFAULT_CONFIG_FILE } from '../src/config/load.ts';
import { SCHEMA } from '../src/config/schema.ts';
import { CatchUpMetrics } from '../src/gateway/events/catch-up-metrics.ts';
import { DiskMetrics } from '../src/gateway/store/disk/disk-metrics.ts';
import { EventMetrics } from '../src/gateway/events/event-metrics.ts';
import { FleetMetrics } from '../src/gateway/fleet/fleet-metrics.ts';
import { ListenerMetrics } from '../src/gateway/listeners/listener-metrics.ts';
import { GatewayMetrics } from '../src/gateway/metrics.ts';
import { OriginMetrics } from '../src/origin/metrics.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const configuration = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
const operations = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');

async function catalogMetricNames(registry: Registry): Promise<string[]> {
  const families = await registry.getMetricsAsJSON();
  return families.map((f) => f.name).filter((name) => name.startsWith('catalog_'));
}

describe('README', () => {
  test('shows the test command that .ci/run runs', () => {
    assert.match(readme, /^npm test\b/m);
    assert.match(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8'), /^npm test$/m);
  });

  test('links every page of docs/ it maps, and each exists', () => {
    const linked = [...readme.matchAll(/\]\((docs\/[\w.-]+)[)#]/g)].map((m) => m[1] ?? '');
    assert.ok(linked.length >= 8);
    for (const page of linked) assert.ok(existsSync(new URL(`../${page}`, import.meta.url)), `README links ${page}, which does not exist`);
  });
});

describe('docs', () => {
  test('the configuration table is the one the schema generates (`npm run docs` rewrites it)', () => {
    assert.ok(configuration.includes(configTable()), 'docs/configuration.md has a stale configuration table: run `npm run docs`');
    for (const key of Object.keys(SCHEMA)) assert.ok(configuration.includes(`| \`${key}\` |`), `docs/configuration.md lacks ${key}`);
  });

  test("config/default.jsonc's comments are the schema's descriptions (`npm run docs` rewrites them)", () => {
    assert.equal(readFileSync(DEFAULT_CONFIG_FILE, 'utf8'), defaultFile(), 'config/default.jsonc differs from what the schema generates: run `npm run docs`');
  });

  test('refer to no issue a reader cannot see, and do not contradict what is built', () => {
    const pages = [
      'README.md',
      ...readdirSync(new URL('../docs/', import.meta.url))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    for (const page of pages) {
      const text = readFileSync(new URL(`../${page}`, import.meta.url), 'utf8');
      assert.doesNotMatch(text, /\bissues? #?\d+/i, `${page} names an issue number`);
      assert.doesNotMatch(text, /not built yet/, page);
    }
  });

  test('operations.md says how readiness, reload and a rolling restart work', () => {
    for (const heading of ['## Readiness, reload and rolling restart', '### Readiness', '### Reload (SIGHUP)', '### Rolling restart (SIGUSR2)']) {
      assert.match(operations, new RegExp(`^${heading.replace(/[()]/g, '\\$&')}$`, 'm'), heading);
    }
  });

  test('lists every metric of the gateway and the origin', async () => {
    const gateway = new Registry();
    const origin = new Registry();
    new GatewayMetrics(
      gateway,
      {
        cache: () => ({ entries: 0, bytes: 0, evictions: 0, admitted: 0, refused: 0, shifts: 0, windowShare: 0.01 }),
        inFlight: () => 0,
        fillWaiting: () => 0,
        originUp: () => true,
        originConnections: () => ({ open: 0, waiting: 0 }),
      },
      { gcDurations: true },
    );
    new FleetMetrics(
      gateway,
      () => true,
      () => false,
    );
    new EventMetrics(gateway);
    new CatchUpMetrics(gateway);
    new DiskMetrics(gateway, () => undefined);
    new ListenerMetrics(gateway);
    new OriginMetrics(origin, () => 0);
    const names = [...(await catalogMetricNames(gateway)), ...(await catalogMetricNames(origin))];
    assert.ok(names.length >= 11);
    for (const name of names) assert.ok(operations.includes(`\`${name}`), `docs/operations.md does not list ${name}`);
  });
});
