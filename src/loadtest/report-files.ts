/** Writes a load test's result as `<stamp>.json` and `<stamp>.html` side by side (a circulation run: JSON only). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderHtmlReport } from './report-html.ts';
import type { LoadtestResult } from './result.ts';

export interface ReportFiles {
  readonly json: string;
  readonly html: string;
}

function stemOf(dir: string, kind: string, startedAt: string): string {
  mkdirSync(dir, { recursive: true });
  return join(dir, `${kind}-${startedAt.replace(/[:.]/g, '-')}`);
}

export function writeReport(dir: string, result: LoadtestResult): ReportFiles {
  const stem = stemOf(dir, 'loadtest', result.startedAt);
  const files = { json: `${stem}.json`, html: `${stem}.html` };
  writeFileSync(files.json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(files.html, renderHtmlReport(result));
  return files;
}

/** Returns the file written. */
export function writeJson(dir: string, kind: string, result: { readonly startedAt: string }): string {
  const file = `${stemOf(dir, kind, result.startedAt)}.json`;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
