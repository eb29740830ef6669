/** A load-test result with the shapes the report must draw well, for the report's tests. */
import type { LoadtestResult, TimelinePoint } from '../../src/loadtest/result.ts';

/** 30 seconds with a warm-up, a latency spike and a burst of errors: what the charts must keep inside their axes. */
export function sampleTimeline(): TimelinePoint[] {
  return Array.from({ length: 30 }, (_, i) => {
    const second = i + 1;
    const spike = second === 17;
    return {
      second,
      responses: Math.round(1000 + 900 * Math.min(1, second / 5) + (second % 7) * 37),
      non2xx: second >= 20 && second <= 22 ? 140 : 3,
      errors: second === 21 ? 12 : 0,
      p50Ms: spike ? 4.2 : 0.9 + (second % 3) * 0.05,
      p90Ms: spike ? 19.5 : 2.1,
      p99Ms: spike ? 87.3 : 5 + (second % 5),
      hitRatio: Math.min(0.97, 0.4 + second / 20),
      offload: second === 1 ? null : Math.min(0.99, 0.45 + second / 20),
    };
  });
}

export function sampleResult(overrides: Partial<LoadtestResult> = {}): LoadtestResult {
  return {
    tool: 'catalog-gateway loadtest',
    startedAt: '2025-01-02T03:04:05.678Z',
    command: 'npm run loadtest -- --duration 3',
    machine: { cpus: 2, cpuModel: 'Test CPU <fast>', memoryBytes: 1 << 30, node: 'v24.0.0', platform: 'linux' },
    target: { mode: 'embedded', urls: ['http://127.0.0.1:1234'], gatewayAdmins: ['http://127.0.0.1:1235'], originAdmin: 'http://127.0.0.1:1236' },
    workload: {
      seed: 1,
      zipf: 1,
      distinct: 100,
      pagingShare: 0.1,
      filterShare: 0.15,
      crawlerShare: 0,
      subjects: 3,
      plannedRequests: 1000,
      queriesByKind: { search: 75, filter: 15, paging: 10 },
      topTargets: ['/v1/books?q=silent%20river', '/v1/books?q=<script>'],
    },
    load: { connections: 10, duration: 3, amount: null, rate: null },
    results: {
      durationSeconds: 3.01,
      requests: 3000,
      requestsPerSecond: 996.7,
      bytes: 123_456,
      latencyMs: { mean: 1.2, p50: 0.9, p90: 2.1, p99: 5.5, max: 12.3 },
      distinctQueriesAsked: 100,
      crawlerRequests: 0,
      statusCounts: { 200: 2990, 401: 10 },
      non2xx: 10,
      errorCount: 2,
      errors: { ECONNRESET: 2 },
    },
    cache: { requests: 3000, byCache: { hit: 2700, miss: 250, collapsed: 50 }, hitRatio: 0.9, originRequests: 250, entries: 250, bytes: 1_000_000 },
    origin: { originCalls: 250, setupCalls: 4, offload: 1 - 250 / 3000, callsPerDistinctQuery: 2.5 },
    memory: { gatewayRssBytes: 80 * 1024 * 1024, originRssBytes: 60 * 1024 * 1024 },
    timeline: sampleTimeline(),
    latencyDistribution: [
      { ms: 0.5, count: 1000 },
      { ms: 1, count: 1500 },
      { ms: 10, count: 500 },
    ],
    ...overrides,
  };
}
