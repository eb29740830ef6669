/**
 * The process metrics both servers expose: prom-client's default collectors, less the three
 * gauges it names with a `_total` suffix (`nodejs_active_{handles,requests,resources}_total`),
 * which `promtool check metrics` rejects because `_total` means a counter. Their per-type
 * siblings (`nodejs_active_handles{type}`, …) carry the same information. The GC histogram may be
 * left out (`gateway.metrics.gcDurations`). Plus `build_info`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';

const MISNAMED = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * One of prom-client's default collectors. `collectDefaultMetrics` runs them all, with no way to
 * leave one out, so each is run on its own (prom-client names them in `metricsList`), with what
 * `collectDefaultMetrics` hands them when given no options.
 */
type DefaultCollector = (registry: Registry, config: { readonly eventLoopMonitoringPrecision: number }) => void;

const load = createRequire(import.meta.url);

const DEFAULT_CONFIG = { eventLoopMonitoringPrecision: 10 };

export interface ProcessMetricsOptions {
  /** prom-client's GC histogram, `nodejs_gc_duration_seconds` (`gateway.metrics.gcDurations`). */
  readonly gcDurations: boolean;
}

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `prefix`: `catalog_gateway` or `catalog_origin`. */
export function collectProcessMetrics(registry: Registry, prefix: string, options: ProcessMetricsOptions): void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name !== 'gc' || options.gcDurations) (load(`prom-client/lib/metrics/${name}`) as DefaultCollector)(registry, DEFAULT_CONFIG);
  }
  for (const name of MISNAMED) registry.removeSingleMetric(name);
  new Gauge({
    name: `${prefix}_build_info`,
    help: 'Always 1; the labels say which build is running.',
    labelNames: ['version', 'node'],
    registers: [registry],
    aggregator: 'first',
  }).set({ version: VERSION, node: process.version }, 1);
}
