/**
 * `node --import tsx test/support/screenshot-report.ts <loadtest-….json> [out.png]`: renders a
 * load test's result and saves the page as Chromium shows it (docs/load-report.png by default).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderHtmlReport } from '../../src/loadtest/report-html.ts';
import type { LoadtestResult } from '../../src/loadtest/result.ts';
import { launchChromium } from './browser.ts';
import { tempDir } from './config.ts';

const [input, output = new URL('../../docs/load-report.png', import.meta.url).pathname] = process.argv.slice(2);
if (input === undefined) throw new Error('usage: screenshot-report.ts <result.json> [out.png]');
const html = join(tempDir('catalog-screenshot-'), 'report.html');
writeFileSync(html, renderHtmlReport(JSON.parse(readFileSync(input, 'utf8')) as LoadtestResult));
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
  await page.goto(pathToFileURL(html).href);
  await page.waitForFunction(() => (globalThis as unknown as { reportCharts?: unknown }).reportCharts !== undefined);
  await page.screenshot({ path: output, fullPage: true });
} finally {
  await browser.close();
}
process.stdout.write(`${output}\n`);
