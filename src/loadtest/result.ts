/**
 * The load test's result: everything the summary, the JSON file and the HTML report show. Absent
 * figures are `null` (a target given without its admin URL has no cache figures), so the JSON
 * round-trips exactly.
 */
import type { DistributionPoint } from './latency-histogram.ts';
import type { MachineInfo } from './machine.ts';
import type { QueryKind } from './workload.ts';

/** What the load generator measured in one second of the run. */
export interface SecondSample {
  /** Seconds since the start; the sample covers (second − 1, second]. */
  readonly second: number;
  readonly responses: number;
  readonly non2xx: number;
  /** Requests that got no response in this second (refused, reset, timed out). */
  readonly errors: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
}

/** A second of the run with what the gateway's metrics said of it. */
export interface TimelinePoint extends SecondSample {
  /** The gateway's hit ratio in this second (server-metrics.ts `hitRatio`). */
  readonly hitRatio: number | null;
  /** Share of the gateway's requests in this second that it did not send on to the origin, by its own count. */
  readonly offload: number | null;
}

export interface LoadtestResult {
  readonly tool: 'catalog-gateway loadtest';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly target: {
    readonly mode: 'embedded' | 'external';
    /** The gateways loaded side by side: one, or a fleet's members. */
    readonly urls: readonly string[];
    /** Admin listeners whose metrics were added up for the cache figures. */
    readonly gatewayAdmins: readonly string[];
    readonly originAdmin: string | null;
  };
  readonly workload: {
    readonly seed: number;
    readonly zipf: number;
    readonly distinct: number;
    readonly pagingShare: number;
    readonly filterShare: number;
    /** Share of requests from a crawler asking each search once. */
    readonly crawlerShare: number;
    readonly subjects: number;
    readonly plannedRequests: number;
    readonly queriesByKind: Readonly<Record<QueryKind, number>>;
    /** The most popular targets, most asked first. */
    readonly topTargets: readonly string[];
  };
  readonly load: {
    readonly connections: number;
    readonly duration: number | null;
    readonly amount: number | null;
    readonly rate: number | null;
  };
  readonly results: {
    readonly durationSeconds: number;
    readonly requests: number;
    readonly requestsPerSecond: number;
    readonly bytes: number;
    readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
    /** Distinct queries the run actually asked (of the workload's planned ones). */
    readonly distinctQueriesAsked: number;
    /** Requests the crawler sent (each a search asked once). */
    readonly crawlerRequests: number;
    readonly statusCounts: Readonly<Record<string, number>>;
    readonly non2xx: number;
    readonly errorCount: number;
    readonly errors: Readonly<Record<string, number>>;
  };
  /** From the gateways' /metrics (summed over a fleet), before and after; `byCache.stale` counts stale reads served. */
  readonly cache: {
    readonly requests: number;
    readonly byCache: Readonly<Record<string, number>>;
    readonly hitRatio: number;
    /** Requests the gateway says it sent to the origin. */
    readonly originRequests: number;
    readonly entries: number | null;
    readonly bytes: number | null;
  } | null;
  /**
   * Requests the origin served during the run, by its own count; `offload` is the share of the
   * gateway's requests that never reached it. `setupCalls` were served before the run, while
   * second pages were resolved, and are in neither figure. `callsPerDistinctQuery` sets the
   * origin's calls against the distinct queries asked: 1 when a fleet asks each query once.
   */
  readonly origin: {
    readonly originCalls: number;
    readonly setupCalls: number;
    readonly offload: number | null;
    readonly callsPerDistinctQuery: number | null;
  } | null;
  readonly memory: { readonly gatewayRssBytes: number | null; readonly originRssBytes: number | null };
  readonly timeline: readonly TimelinePoint[];
  readonly latencyDistribution: readonly DistributionPoint[];
}
