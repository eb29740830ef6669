import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { writeReport } from '../../src/loadtest/report-files.ts';
import { renderHtmlReport } from '../../src/loadtest/report-html.ts';
import { formatSummary } from '../../src/loadtest/summary.ts';
import { tempDir } from '../support/config.ts';
import { sampleResult } from '../support/sample-result.ts';

test('the HTML report is self-contained: uPlot and the figures inline, nothing fetched, text escaped', () => {
  const html = renderHtmlReport(sampleResult());
  assert.doesNotMatch(html, /<link/i);
  assert.doesNotMatch(html, /<script[^>]+src=/i);
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  assert.doesNotMatch(html, /@import/i);
  for (const id of ['throughput', 'latency', 'errors', 'cache', 'distribution']) assert.ok(html.includes(`id="chart-${id}"`), id);
  assert.ok(html.includes('Test CPU &#60;fast&#62;'), 'text is escaped');
  assert.ok(html.includes('q=&#60;script&#62;'));
  assert.ok(html.includes('Hit ratio over the whole run 90.0 %'));
  assert.equal(html.match(/<\/script>/g)?.length, 3, 'the data, uPlot and the drawing script, and no other script end: a query cannot close the data early');
});

test('without gateway metrics the report says so instead of drawing an empty chart', () => {
  const html = renderHtmlReport(sampleResult({ cache: null, origin: null }));
  assert.ok(!html.includes('id="chart-cache"'));
  assert.ok(html.includes('cache hit ratio is unknown'));
});

test('the summary names throughput, percentiles, statuses, errors, offload and memory', () => {
  const summary = formatSummary(sampleResult());
  for (const expected of [
    '997 req/s',
    'p50 0.90 ms',
    'p99 5.50 ms',
    'max 12.3 ms',
    '401: 10',
    'ECONNRESET: 2',
    'hit ratio 90.0 %',
    '250 calls',
    'offload 91.7 %',
    'gateway RSS 80 MiB',
  ]) {
    assert.ok(summary.includes(expected), `${expected} in\n${summary}`);
  }
  assert.ok(formatSummary(sampleResult({ cache: null, origin: null })).includes('n/a (no --gateway-admin)'));
});

test('the JSON file round-trips and sits next to the HTML file', (t) => {
  const dir = tempDir('catalog-report-');
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const result = sampleResult();
  const files = writeReport(dir, result);
  assert.match(files.json, /loadtest-2025-01-02T03-04-05-678Z\.json$/);
  assert.deepEqual(JSON.parse(readFileSync(files.json, 'utf8')), result);
  assert.equal(readFileSync(files.html, 'utf8'), renderHtmlReport(result));
});
