/**
 * The load test's result as one self-contained HTML page: inline CSS and inline SVG, no script and
 * no external reference, so it can be archived with the JSON and opened offline.
 */
import type { LoadtestResult } from './result.ts';
import { formatSummary } from './summary.ts';
import { barChart, escapeXml, formatNumber, lineChart } from './svg-chart.ts';

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 760px; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
pre { background: #f5f5f5; padding: .8rem; overflow-x: auto; font-size: 12px; }
svg { display: block; margin: .5rem 0; }
svg .title { font-size: 14px; font-weight: 600; } svg .tick { font-size: 11px; fill: #555; }
svg .label { font-size: 12px; fill: #333; } svg .grid { stroke: #e4e4e4; } svg .axis { stroke: #888; }
table { border-collapse: collapse; } td, th { padding: .2rem .8rem .2rem 0; text-align: left; }
`;

export function renderHtmlReport(result: LoadtestResult): string {
  const t = result.timeline;
  const throughput = lineChart({
    title: 'Throughput',
    xLabel: 'seconds',
    yLabel: 'responses / s',
    series: [{ name: 'responses/s', points: t.map((p) => [p.second, p.responses] as const) }],
  });
  const latency = lineChart({
    title: 'Latency over time',
    xLabel: 'seconds',
    yLabel: 'ms',
    series: [
      { name: 'p50', points: t.map((p) => [p.second, p.p50Ms] as const) },
      { name: 'p99', points: t.map((p) => [p.second, p.p99Ms] as const) },
    ],
  });
  const distribution = barChart({
    title: 'Latency distribution',
    xLabel: 'ms (upper edge of bin, log-spaced)',
    yLabel: 'responses',
    bars: result.latencyDistribution.map((d) => ({ label: formatNumber(d.ms), value: d.count })),
  });
  const hitPoints = t.flatMap((p) => (p.hitRatio === null ? [] : [[p.second, p.hitRatio] as const]));
  const hitRatio =
    result.cache === null
      ? '<p>No gateway admin URL was given, so the cache hit ratio is unknown.</p>'
      : lineChart({ title: `Cache hit ratio (whole run ${(result.cache.hitRatio * 100).toFixed(1)} %)`, xLabel: 'seconds', yLabel: 'hit ratio', yMax: 1, series: [{ name: 'hit ratio', points: hitPoints }] });
  const statuses = Object.entries(result.results.statusCounts)
    .map(([status, n]) => `<tr><td>${escapeXml(status)}</td><td>${n}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>catalog-gateway load test ${escapeXml(result.startedAt)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>catalog-gateway load test</h1>
<p>${escapeXml(result.startedAt)} · <code>${escapeXml(result.command)}</code><br>
${result.machine.cpus} × ${escapeXml(result.machine.cpuModel)}, Node ${escapeXml(result.machine.node)}, ${escapeXml(result.machine.platform)}</p>
<h2>Summary</h2>
<pre>${escapeXml(formatSummary(result))}</pre>
<h2>Throughput and latency</h2>
${throughput}
${latency}
${distribution}
<h2>Cache</h2>
${hitRatio}
<h2>Status codes</h2>
<table><tr><th>status</th><th>responses</th></tr>${statuses}</table>
<h2>Most asked queries</h2>
<pre>${escapeXml(result.workload.topTargets.join('\n'))}</pre>
</body>
</html>
`;
}
