/**
 * The process metrics both servers expose: prom-client's default collectors, less the three
 * gauges it names with a `_total` suffix (`nodejs_active_{handles,requests,resources}_total`),
 * which `promtool check metrics` rejects because `_total` means a counter. Their per-type
 * siblings (`nodejs_active_handles{type}`, …) carry the same information. Its GC histogram is
 * made from V8's GC profiler instead (gc-durations.ts). Plus `build_info`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';
import { collectGcDurations } from './gc-durations.ts';

const MISNAMED = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * One of prom-client's default collectors: `collectDefaultMetrics` runs them all, with no way to
 * leave one out, so each is run on its own (prom-client names them in `metricsList`).
 */
type DefaultCollector = (registry: Registry, config: { readonly eventLoopMonitoringPrecision: number }) => void;

const load = createRequire(import.meta.url);

/** What `collectDefaultMetrics` hands each collector when given no options. */
const DEFAULT_CONFIG = { eventLoopMonitoringPrecision: 10 };

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `prefix`: `catalog_gateway` or `catalog_origin`. */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name !== 'gc') (load(`prom-client/lib/metrics/${name}`) as DefaultCollector)(registry, DEFAULT_CONFIG);
  }
  collectGcDurations(registry);
  for (const name of MISNAMED) registry.removeSingleMetric(name);
  new Gauge({
    name: `${prefix}_build_info`,
    help: 'Always 1; the labels say which build is running.',
    labelNames: ['version', 'node'],
    registers: [registry],
    aggregator: 'first',
  }).set({ version: VERSION, node: process.version }, 1);
}
