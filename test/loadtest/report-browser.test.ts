/**
 * The load report as a reader sees it: opened from disk in headless Chromium, it must run without
 * a console error, draw every chart, keep every plotted value inside its chart's axes, and line
 * the time charts up on one x range.
 */
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { renderHtmlReport } from '../../src/loadtest/report-html.ts';
import type { LoadtestResult } from '../../src/loadtest/result.ts';
import { launchChromium } from '../support/browser.ts';
import { tempDir } from '../support/config.ts';
import { sampleResult } from '../support/sample-result.ts';

interface ChartFacts {
  readonly id: string;
  readonly timeAxis: boolean;
  readonly left: number;
  readonly width: number;
  readonly xMin: number;
  readonly xMax: number;
  readonly outside: readonly string[];
  readonly points: number;
  /** The first and last x values plotted. */
  readonly first: number;
  readonly last: number;
}

async function render(result: LoadtestResult, screenshot?: string): Promise<{ facts: ChartFacts[]; problems: string[]; canvases: number }> {
  const dir = tempDir('catalog-report-browser-');
  const file = join(dir, 'report.html');
  writeFileSync(file, renderHtmlReport(result));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) problems.push(`fetched ${request.url()}`);
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => (globalThis as unknown as { reportCharts?: unknown }).reportCharts !== undefined);
    const facts = await page.evaluate(() => {
      interface Scale {
        min: number;
        max: number;
      }
      interface Plot {
        bbox: { left: number; width: number };
        scales: Record<string, Scale>;
        data: (number | null)[][];
        series: { label: string }[];
      }
      const charts = (globalThis as unknown as { reportCharts: { id: string; timeAxis: boolean; u: Plot }[] }).reportCharts;
      return charts.map(({ id, timeAxis, u }) => {
        const x = u.scales.x as Scale;
        const y = u.scales.y as Scale;
        const outside: string[] = [];
        let points = 0;
        const xs = u.data[0] ?? [];
        for (let s = 1; s < u.data.length; s++) {
          (u.data[s] ?? []).forEach((v, i) => {
            if (v === null) return;
            points++;
            const at = xs[i] ?? NaN;
            if (v < y.min || v > y.max || at < x.min || at > x.max)
              outside.push(`${u.series[s]?.label ?? s} (${at}, ${v}) outside x ${x.min}–${x.max}, y ${y.min}–${y.max}`);
          });
        }
        return {
          id,
          timeAxis,
          left: u.bbox.left,
          width: u.bbox.width,
          xMin: x.min,
          xMax: x.max,
          outside,
          points,
          first: xs[0] ?? NaN,
          last: xs[xs.length - 1] ?? NaN,
        };
      });
    });
    const canvases = await page.locator('canvas').count();
    if (screenshot !== undefined) await page.screenshot({ path: screenshot, fullPage: true });
    return { facts, problems, canvases };
  } finally {
    await browser.close();
  }
}

test('the load report renders in headless Chromium: no console errors, every value inside its axes, time axes aligned', async () => {
  const shot = join(tempDir('catalog-report-shot-'), 'load-report.png');
  const { facts, problems, canvases } = await render(sampleResult(), shot);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    facts.map((f) => f.id),
    ['throughput', 'latency', 'errors', 'cache', 'distribution'],
  );
  assert.equal(canvases, facts.length);
  for (const chart of facts) {
    assert.ok(chart.points > 0, `${chart.id} plots something`);
    assert.deepEqual(chart.outside, [], `${chart.id}: every value inside the axes`);
  }
  const timed = facts.filter((f) => f.timeAxis);
  assert.equal(timed.length, 4);
  for (const chart of timed) {
    assert.deepEqual(
      [chart.left, chart.width, chart.xMin, chart.xMax],
      [timed[0]?.left, timed[0]?.width, 0, 30],
      `${chart.id} shares the first chart's x axis`,
    );
  }
  const bars = facts.find((f) => f.id === 'distribution');
  assert.ok(bars !== undefined && bars.xMin < bars.first && bars.xMax > bars.last, 'the first and last bars are drawn whole, not cut by the axes');
  assert.ok(statSync(shot).size > 20_000, 'a screenshot with something on it');
});

test('a report without cache figures, or with a run of zeros, still renders inside its axes', async () => {
  const quiet = sampleResult({ cache: null, origin: null });
  const zeros = { ...quiet, timeline: quiet.timeline.map((p) => ({ ...p, responses: 0, non2xx: 0, errors: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0 })) };
  const { facts, problems } = await render(zeros);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    facts.map((f) => f.id),
    ['throughput', 'latency', 'errors', 'distribution'],
  );
  for (const chart of facts) assert.deepEqual(chart.outside, [], chart.id);
});
