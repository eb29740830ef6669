/**
 * Both servers' `/metrics` against the real Prometheus tools (Debian's `prometheus` package,
 * installed by test/support/system-deps.sh): `promtool check metrics` accepts them, and a real
 * Prometheus server scrapes both admin listeners (`up` is 1, the build is known); the rules in
 * ops/prometheus pass their promtool unit tests, and the dashboard in ops/grafana queries only
 * metrics that exist.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { freePort } from '../../src/cli/free-port.ts';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { tempDir } from '../support/config.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, until } from '../support/harness.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';
import { protocolOverrides } from '../support/protocols.ts';

let origin: OriginFixture;
let fx: GatewayFixture;
before(async () => {
  origin = await startOriginFixture();
  // Over TLS, so that the listener's metrics (certificate expiry, reloads, rapid reset) are there too.
  fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, ...protocolOverrides('h2') });
  await fx.get('/v1/books?q=river');
});
after(async () => {
  await fx.stop();
  await origin.stop();
});

test("promtool check metrics accepts both servers' metrics", async () => {
  for (const admin of [fx.gateway.adminUrl, origin.origin.adminUrl]) {
    const text = (await get(`${admin}/metrics`)).body;
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(checked.status, 0, `${admin}: ${checked.stdout}${checked.stderr}`);
  }
});

test('a real Prometheus scrapes both admin listeners', async () => {
  const dir = tempDir();
  const port = await freePort();
  const hostOf = (url: string): string => new URL(url).host;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s }',
      'scrape_configs:',
      `  - job_name: gateway\n    static_configs: [{ targets: ['${hostOf(fx.gateway.adminUrl)}'] }]`,
      `  - job_name: origin\n    static_configs: [{ targets: ['${hostOf(origin.origin.adminUrl)}'] }]`,
      '',
    ].join('\n'),
  );
  const server = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: 'ignore' },
  );
  try {
    const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const reply = await get(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
      if (reply?.status !== 200) return [];
      return (JSON.parse(reply.body) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
    };
    await until(async () => {
      const up = await query('up == 1');
      if (up.length < 2) await new Promise((resolve) => setTimeout(resolve, 250));
      return up.length === 2;
    }, 30_000);
    const builds = await query('catalog_gateway_build_info or catalog_origin_build_info');
    assert.equal(builds.length, 2);
    assert.ok(builds.every((b) => b.metric.version !== undefined && b.metric.node === process.version));
    const hits = await query('catalog_gateway_http_requests_total');
    assert.ok(hits.length > 0, "the gateway's request counter is in Prometheus");
  } finally {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
});

test('the alerting and recording rules pass promtool check rules and their unit tests', () => {
  const checked = spawnSync('promtool', ['check', 'rules', 'ops/prometheus/rules.yml'], { encoding: 'utf8' });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  const tested = spawnSync('promtool', ['test', 'rules', 'rules.test.yml'], { cwd: 'ops/prometheus', encoding: 'utf8' });
  assert.equal(tested.status, 0, tested.stdout + tested.stderr);
});

test('every query of the Grafana dashboard names metrics the servers or the recording rules produce', async () => {
  const dashboard = JSON.parse(readFileSync('ops/grafana/catalog-gateway.json', 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
    templating: { list: { query?: unknown }[] };
  };
  const produced = new Set<string>();
  for (const admin of [fx.gateway.adminUrl, origin.origin.adminUrl]) {
    for (const line of (await get(`${admin}/metrics`)).body.split('\n')) {
      const name = /^# TYPE (\S+) (\S+)/.exec(line);
      if (name?.[1] === undefined) continue;
      produced.add(name[1]);
      if (name[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) produced.add(`${name[1]}${suffix}`);
    }
  }
  for (const match of readFileSync('ops/prometheus/rules.yml', 'utf8').matchAll(/record: (\S+)/g)) produced.add(match[1] ?? '');
  const exprs = [
    ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
    ...dashboard.templating.list.map((v) => v.query).filter((q): q is string => typeof q === 'string' && q.includes('(')),
  ];
  assert.ok(exprs.length >= 10);
  const FUNCTIONS = new Set([
    'sum',
    'by',
    'rate',
    'increase',
    'time',
    'histogram_quantile',
    'label_values',
    'le',
    'instance',
    'cache',
    'status',
    'reason',
    'outcome',
    'kind',
    'mode',
    'result',
    'role',
  ]);
  for (const expr of exprs) {
    const withoutStrings = expr
      .replace(/"[^"]*"/g, '')
      .replace(/\[[^\]]*\]/g, '')
      .replace(/\{[^}]*\}/g, '');
    for (const [word] of withoutStrings.matchAll(/[a-z_][a-z0-9_:]*/g)) {
      if (FUNCTIONS.has(word)) continue;
      assert.ok(produced.has(word), `dashboard query names ${word}, which nothing produces: ${expr}`);
    }
  }
});
