/** Writes a load test's result as `<stamp>.json` and `<stamp>.html` side by side. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderHtmlReport } from './report-html.ts';
import type { LoadtestResult } from './result.ts';

export interface ReportFiles {
  readonly json: string;
  readonly html: string;
}

export function writeReport(dir: string, result: LoadtestResult): ReportFiles {
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `loadtest-${result.startedAt.replace(/[:.]/g, '-')}`);
  const files = { json: `${stem}.json`, html: `${stem}.html` };
  writeFileSync(files.json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(files.html, renderHtmlReport(result));
  return files;
}
