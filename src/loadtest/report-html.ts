/**
 * The load test's result as one self-contained HTML page: uPlot (its script and stylesheet) and
 * the figures are inlined, nothing is fetched, so the page can be archived beside the JSON and
 * opened offline. Every time chart shares one x range and one y-axis width, so their seconds line
 * up; each y range starts at 0 and ends on a tick at or above the largest value, so no line
 * leaves its plot. A headless Chromium test (test/loadtest/report-browser.test.ts) holds both.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { LoadtestResult } from './result.ts';
import { formatSummary } from './summary.ts';

const require = createRequire(import.meta.url);
const UPLOT_JS = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
const UPLOT_CSS = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 860px; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
pre { background: #f5f5f5; padding: .8rem; overflow-x: auto; font-size: 12px; }
.chart { margin: 1rem 0 1.5rem; } .note { color: #555; font-size: 12px; }
table { border-collapse: collapse; } td, th { padding: .2rem .8rem .2rem 0; text-align: left; }
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** JSON that can sit inside a `<script>` element: no `</script>` or `<!--` can be formed. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** What the page's script draws: one entry per chart, columns as uPlot takes them. */
function chartData(result: LoadtestResult): unknown {
  const t = result.timeline;
  const seconds = t.map((p) => p.second);
  const charts: unknown[] = [
    { id: 'throughput', title: 'Throughput', unit: 'responses / s', series: [{ label: 'responses/s', values: t.map((p) => p.responses) }] },
    {
      id: 'latency',
      title: 'Latency percentiles',
      unit: 'ms',
      series: [
        { label: 'p50', values: t.map((p) => p.p50Ms) },
        { label: 'p90', values: t.map((p) => p.p90Ms) },
        { label: 'p99', values: t.map((p) => p.p99Ms) },
      ],
    },
    {
      id: 'errors',
      title: 'Errors',
      unit: 'per second',
      series: [
        { label: 'non-2xx responses', values: t.map((p) => p.non2xx) },
        { label: 'no response (refused, reset, timeout)', values: t.map((p) => p.errors) },
      ],
    },
  ];
  if (result.cache !== null) {
    charts.push({
      id: 'cache',
      title: 'Hit ratio and offload',
      unit: '%',
      ratio: true,
      series: [
        { label: 'hit ratio', values: t.map((p) => p.hitRatio) },
        { label: 'offload (gateway count)', values: t.map((p) => p.offload) },
      ],
    });
  }
  return {
    seconds,
    charts,
    distribution: { ms: result.latencyDistribution.map((d) => d.ms), counts: result.latencyDistribution.map((d) => d.count) },
  };
}

/** Runs in the page: builds the charts with uPlot and leaves them on `window.reportCharts` for the browser test. */
const DRAW = String.raw`
(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const COLOURS = ['#1f6fb2', '#d9534f', '#3c9d5d', '#8e6bbf'];
  const WIDTH = 820, HEIGHT = 240, Y_AXIS = 64;
  /** A round number at or above v, at most a quarter more: the top of a y range. */
  const niceCeil = (v) => {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  };
  const lastSecond = data.seconds.length === 0 ? 1 : data.seconds[data.seconds.length - 1];
  const charts = [];
  for (const c of data.charts) {
    const el = document.getElementById('chart-' + c.id);
    const opts = {
      title: c.title,
      width: WIDTH,
      height: HEIGHT,
      scales: {
        x: { time: false, range: () => [0, lastSecond] },
        y: { range: c.ratio ? () => [0, 100] : (u, min, max) => [0, niceCeil(max)] },
      },
      axes: [
        { label: 'seconds since start', size: 40 },
        { label: c.unit, size: Y_AXIS },
      ],
      series: [{ label: 'second' }, ...c.series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 1.5, spanGaps: false }))],
    };
    const columns = [data.seconds, ...c.series.map((s) => s.values.map((v) => (v === null ? null : c.ratio ? v * 100 : v)))];
    charts.push({ id: c.id, timeAxis: true, u: new uPlot(opts, columns, el) });
  }
  const d = data.distribution;
  if (d.ms.length > 0) {
    const opts = {
      title: 'Latency distribution',
      width: WIDTH,
      height: HEIGHT,
      // Half a bin of room at either end, so the first and last bars are drawn whole.
      scales: { x: { time: false, distr: 3, range: () => [d.ms[0] / 1.5, d.ms[d.ms.length - 1] * 1.5] }, y: { range: (u, min, max) => [0, niceCeil(max)] } },
      axes: [{ label: 'ms (upper edge of bin, log scale)', size: 40 }, { label: 'responses', size: Y_AXIS }],
      series: [{ label: 'ms' }, { label: 'responses', stroke: COLOURS[0], fill: 'rgba(31,111,178,0.25)', paths: uPlot.paths.bars({ size: [0.8, 40] }), points: { show: false } }],
    };
    charts.push({ id: 'distribution', timeAxis: false, u: new uPlot(opts, [d.ms, d.counts], document.getElementById('chart-distribution')) });
  }
  window.reportCharts = charts;
})();
`;

export function renderHtmlReport(result: LoadtestResult): string {
  const statuses = Object.entries(result.results.statusCounts)
    .map(([status, n]) => `<tr><td>${escapeHtml(status)}</td><td>${n}</td></tr>`)
    .join('');
  const cacheNote =
    result.cache === null
      ? '<p>No gateway admin URL was given, so the cache hit ratio is unknown.</p>'
      : `<p class="note">Hit ratio over the whole run ${(result.cache.hitRatio * 100).toFixed(1)} %: requests answered from storage (hit, or stale while revalidating) out of requests that consulted the cache, as docs/operations.md, the recording rule and the dashboard define it. Offload per second is from the gateway's own count of origin requests; the summary's offload is from the origin's count.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>catalog-gateway load test ${escapeHtml(result.startedAt)}</title>
<style>${UPLOT_CSS}${STYLE}</style>
</head>
<body>
<h1>catalog-gateway load test</h1>
<p>${escapeHtml(result.startedAt)} · <code>${escapeHtml(result.command)}</code><br>
${result.machine.cpus} × ${escapeHtml(result.machine.cpuModel)}, Node ${escapeHtml(result.machine.node)}, ${escapeHtml(result.machine.platform)}</p>
<h2>Summary</h2>
<pre>${escapeHtml(formatSummary(result))}</pre>
<h2>Over time</h2>
<div class="chart" id="chart-throughput"></div>
<div class="chart" id="chart-latency"></div>
<div class="chart" id="chart-errors"></div>
${result.cache === null ? '' : '<div class="chart" id="chart-cache"></div>'}
${cacheNote}
<h2>Latency distribution</h2>
<div class="chart" id="chart-distribution"></div>
<h2>Status codes</h2>
<table><tr><th>status</th><th>responses</th></tr>${statuses}</table>
<h2>Most asked queries</h2>
<pre>${escapeHtml(result.workload.topTargets.join('\n'))}</pre>
<script type="application/json" id="report-data">${scriptJson(chartData(result))}</script>
<script>${UPLOT_JS}</script>
<script>${DRAW}</script>
</body>
</html>
`;
}
