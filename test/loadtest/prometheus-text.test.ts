import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Gauge, Registry } from 'prom-client';
import { PrometheusFormatError, parsePrometheusText } from '../../src/loadtest/prometheus-text.ts';

test('reads counters by name and labels from prom-client output', async () => {
  const registry = new Registry();
  const requests = new Counter({ name: 'demo_requests_total', help: 'h', labelNames: ['route', 'cache'], registers: [registry] });
  const gauge = new Gauge({ name: 'demo_bytes', help: 'h', registers: [registry] });
  requests.inc({ route: '/v1/books', cache: 'hit' }, 7);
  requests.inc({ route: '/v1/books', cache: 'miss' }, 2);
  requests.inc({ route: '/v1/branches', cache: 'hit' }, 1);
  gauge.set(1234.5);
  const samples = parsePrometheusText(await registry.metrics());
  assert.equal(samples.sum('demo_requests_total'), 10);
  assert.equal(samples.sum('demo_requests_total', { cache: 'hit' }), 8);
  assert.equal(samples.value('demo_requests_total', { route: '/v1/books', cache: 'miss' }), 2);
  assert.equal(samples.value('demo_bytes'), 1234.5);
  assert.equal(samples.value('demo_absent'), undefined);
  assert.equal(samples.sum('demo_absent'), 0);
  assert.throws(() => samples.value('demo_requests_total', { cache: 'hit' }), PrometheusFormatError);
});

test('handles escapes, special values, timestamps and histogram suffixes', () => {
  const text = [
    '# HELP x_total a "counter"',
    '# TYPE x_total counter',
    'x_total{path="a\\"b\\\\c\\nd",le="+Inf"} 3 1700000000000',
    'y NaN',
    'y2 Nan',
    'z{a="1", b="2",} +Inf',
    'w -Inf',
    'h_bucket{le="0.005"} 4',
    'h_sum 0.25',
    'e 1.5e3',
    '',
  ].join('\n');
  const samples = parsePrometheusText(text);
  assert.equal(samples.value('x_total', { path: 'a"b\\c\nd' }), 3);
  assert.ok(Number.isNaN(samples.value('y')));
  assert.ok(Number.isNaN(samples.value('y2')), 'prom-client writes NaN as Nan');
  assert.equal(samples.value('z', { a: '1', b: '2' }), Number.POSITIVE_INFINITY);
  assert.equal(samples.value('w'), Number.NEGATIVE_INFINITY);
  assert.equal(samples.value('h_bucket', { le: '0.005' }), 4);
  assert.equal(samples.value('h_sum'), 0.25);
  assert.equal(samples.value('e'), 1500);
});

test('a malformed line is an error naming the line', () => {
  assert.throws(() => parsePrometheusText('ok 1\nbad{a="1" 2\n'), /line 2/);
  assert.throws(() => parsePrometheusText('ok one'), /line 1: "one" is not a sample value/);
  assert.throws(() => parsePrometheusText('{a="1"} 1'), /line 1: expected a metric name/);
  assert.throws(() => parsePrometheusText('m{a="\\x"} 1'), /unknown escape/);
});
