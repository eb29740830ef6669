import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseLoadtestArgs } from '../../src/loadtest/args.ts';
import { AvailabilityLedger } from '../../src/loadtest/availability-ledger.ts';
import { formatCirculation, histogramQuantile, type CirculationResult } from '../../src/loadtest/circulation.ts';
import { parsePrometheusText } from '../../src/loadtest/prometheus-text.ts';

describe('the stale-read judge', () => {
  const ledger = new AvailabilityLedger();
  ledger.watch('bk_1', 'branch_a', true);
  // Lent: the request went out at 1000 ms, the origin showed the change at 1010 ms.
  assert.equal(ledger.record('bk_1', 'branch_a', { sentAt: 1000, knownAt: 1010, available: false }), true);
  assert.equal(ledger.record('bk_1', 'branch_a', { sentAt: 1500, knownAt: 1510, available: false }), false, 'no flip: the same availability again');

  test('an answer may miss a change for up to the allowed lag', () => {
    assert.equal(ledger.isStale('bk_1', 'branch_a', true, 1500, 1501, 1000), false);
    assert.equal(ledger.isStale('bk_1', 'branch_a', true, 2009, 2010, 1000), false);
  });

  test('an answer that still shows what a change older than the lag replaced is stale', () => {
    assert.equal(ledger.isStale('bk_1', 'branch_a', true, 2011, 2012, 1000), true);
    assert.equal(ledger.isStale('bk_1', 'branch_a', false, 2011, 2012, 1000), false);
  });

  test('a change may show as soon as its request went out, not before', () => {
    assert.equal(ledger.isStale('bk_1', 'branch_a', false, 990, 1005, 1000), false);
    assert.equal(ledger.isStale('bk_1', 'branch_a', false, 900, 990, 0), true, 'it showed a loan not yet asked for');
  });

  test('pairs the run never changed are not judged', () => {
    assert.equal(ledger.isStale('bk_2', 'branch_a', true, 5000, 5001, 0), false);
  });
});

test('histogramQuantile reads the observations added between two scrapes', () => {
  const text = (counts: number[]): string =>
    ['0.01', '0.1', '1', '+Inf'].map((le, i) => `lag_bucket{le="${le}"} ${counts[i] ?? 0}`).join('\n') + `\nlag_count ${counts[3] ?? 0}\n`;
  const before = parsePrometheusText(text([5, 5, 5, 5]));
  const after = parsePrometheusText(text([5, 95, 105, 105]));
  const p50 = histogramQuantile(before, after, 'lag', 0.5);
  assert.ok(p50 !== null && p50 > 0.01 && p50 < 0.1, String(p50));
  const p99 = histogramQuantile(before, after, 'lag', 0.99);
  assert.ok(p99 !== null && p99 > 0.1 && p99 <= 1, String(p99));
  assert.equal(histogramQuantile(before, before, 'lag', 0.5), null);
});

test('--circulation flags', () => {
  const options = parseLoadtestArgs(['--circulation', '--loans-per-second', '2.5', '--allowed-lag-ms', '500']);
  assert.ok(options !== 'help');
  assert.equal(options.circulation, true);
  assert.equal(options.loansPerSecond, 2.5);
  assert.equal(options.allowedLagMs, 500);
  assert.throws(() => parseLoadtestArgs(['--circulation', '--url', 'http://127.0.0.1:1']), /--circulation/);
  assert.throws(() => parseLoadtestArgs(['--loans-per-second', '0']), /--loans-per-second/);
});

test('the summary counts every copy lent as returned once: during the run, or after it', () => {
  const result: CirculationResult = {
    tool: 'catalog-gateway loadtest --circulation',
    startedAt: '2026-11-29T00:00:00.000Z',
    options: { connections: 2, duration: 6, loansPerSecond: 1, allowedLagMs: 1000, zipf: 1, distinct: 20, filters: 0, seed: 1 },
    watchedPairs: 10,
    searches: 100,
    staleReads: 0,
    loans: { made: 4, returned: 2, returnedAfter: 2, refused: 0, flips: 3 },
    offload: 0.9,
    purgeLagSeconds: { count: 3, p50: 0.01, p99: 0.02 },
    events: { sent: {}, received: {} },
    searchLatencyMs: { p50: 1, p99: 2 },
    hosts: [],
    timeline: [],
  };
  assert.match(formatCirculation(result), /^loans {8}4 lent: 2 returned during the run, 2 after it; 0 refused; 3 availability flips$/m);
});
