import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { writeReport } from '../../src/loadtest/report-files.ts';
import { renderHtmlReport } from '../../src/loadtest/report-html.ts';
import type { LoadtestResult } from '../../src/loadtest/result.ts';
import { formatSummary } from '../../src/loadtest/summary.ts';
import { tempDir } from '../support/config.ts';

function sampleResult(overrides: Partial<LoadtestResult> = {}): LoadtestResult {
  return {
    tool: 'catalog-gateway loadtest',
    startedAt: '2025-01-02T03:04:05.678Z',
    command: 'npm run loadtest -- --duration 3',
    machine: { cpus: 2, cpuModel: 'Test CPU <fast>', memoryBytes: 1 << 30, node: 'v24.0.0', platform: 'linux' },
    target: { mode: 'embedded', url: 'http://127.0.0.1:1234', gatewayAdmin: 'http://127.0.0.1:1235', originAdmin: 'http://127.0.0.1:1236' },
    workload: {
      seed: 1, zipf: 1, distinct: 100, pagingShare: 0.1, filterShare: 0.15, subjects: 3, plannedRequests: 1000,
      queriesByKind: { search: 75, filter: 15, paging: 10 }, topTargets: ['/v1/books?q=silent%20river', '/v1/books?q=<script>'],
    },
    load: { connections: 10, duration: 3, amount: null, rate: null },
    results: {
      durationSeconds: 3.01, requests: 3000, requestsPerSecond: 996.7, bytes: 123_456,
      latencyMs: { mean: 1.2, p50: 0.9, p90: 2.1, p99: 5.5, max: 12.3 },
      statusCounts: { 200: 2990, 401: 10 }, non2xx: 10, errorCount: 2, errors: { ECONNRESET: 2 },
    },
    cache: { requests: 3000, byCache: { hit: 2700, miss: 250, collapsed: 50 }, hitRatio: 0.9, originRequests: 250, entries: 250, bytes: 1_000_000 },
    origin: { originCalls: 250, setupCalls: 4, offload: 1 - 250 / 3000 },
    memory: { gatewayRssBytes: 80 * 1024 * 1024, originRssBytes: 60 * 1024 * 1024 },
    timeline: [1, 2, 3].map((second) => ({ second, responses: 1000, non2xx: 3, p50Ms: 0.9, p99Ms: 5, hitRatio: 0.8 + second / 20 })),
    latencyDistribution: [{ ms: 0.5, count: 1000 }, { ms: 1, count: 1500 }, { ms: 10, count: 500 }],
    ...overrides,
  };
}

test('the HTML report is self-contained and holds every figure', () => {
  const html = renderHtmlReport(sampleResult());
  assert.doesNotMatch(html, /<script/i);
  assert.doesNotMatch(html, /<link/i);
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  assert.doesNotMatch(html, /url\(/i);
  assert.doesNotMatch(html, /@import/i);
  assert.equal((html.match(/<svg /g) ?? []).length, 4, 'throughput, latency over time, distribution, hit ratio');
  for (const title of ['Throughput', 'Latency over time', 'Latency distribution', 'Cache hit ratio']) assert.ok(html.includes(title), title);
  assert.ok(html.includes('Test CPU &#60;fast&#62;'), 'text is escaped');
  assert.ok(html.includes('q=&#60;script&#62;'));
  assert.ok(html.includes('hit ratio 90.0 %'));
  assert.ok(html.includes('<polyline'));
});

test('without gateway metrics the report says so instead of drawing an empty chart', () => {
  const html = renderHtmlReport(sampleResult({ cache: null, origin: null }));
  assert.equal((html.match(/<svg /g) ?? []).length, 3);
  assert.ok(html.includes('cache hit ratio is unknown'));
});

test('the summary names throughput, percentiles, statuses, errors, offload and memory', () => {
  const summary = formatSummary(sampleResult());
  for (const expected of ['997 req/s', 'p50 0.90 ms', 'p99 5.50 ms', 'max 12.3 ms', '401: 10', 'ECONNRESET: 2', 'hit ratio 90.0 %', '250 calls', 'offload 91.7 %', 'gateway RSS 80 MiB']) {
    assert.ok(summary.includes(expected), `${expected} in\n${summary}`);
  }
  assert.ok(formatSummary(sampleResult({ cache: null, origin: null })).includes('n/a (no --gateway-admin)'));
});

test('the JSON file round-trips and sits next to the HTML file', (t) => {
  const dir = tempDir('catalog-report-');
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const result = sampleResult();
  const files = writeReport(dir, result);
  assert.match(files.json, /loadtest-2025-01-02T03-04-05-678Z\.json$/);
  assert.deepEqual(JSON.parse(readFileSync(files.json, 'utf8')), result);
  assert.equal(readFileSync(files.html, 'utf8'), renderHtmlReport(result));
});
