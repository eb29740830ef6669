/**
 * The process metrics both servers expose: prom-client's default collectors, less the three
 * gauges it names with a `_total` suffix (`nodejs_active_{handles,requests,resources}_total`),
 * which `promtool check metrics` rejects because `_total` means a counter. Their per-type
 * siblings (`nodejs_active_handles{type}`, …) carry the same information. Plus `build_info`.
 */
import { readFileSync } from 'node:fs';
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';

const MISNAMED = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `prefix`: `catalog_gateway` or `catalog_origin`. */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED) registry.removeSingleMetric(name);
  new Gauge({
    name: `${prefix}_build_info`,
    help: 'Always 1; the labels say which build is running.',
    labelNames: ['version', 'node'],
    registers: [registry],
    aggregator: 'first',
  }).set({ version: VERSION, node: process.version }, 1);
}
