/**
 * Bench results: `<name>-latest.json` plus a timestamped copy, in the ignored `bench-results/`,
 * or in the committed `bench/results/` when the run is meant to update the figures of docs/benchmarks.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './fleet.ts';

const COMMITTED_DIR = join(REPO_ROOT, 'bench', 'results');
/** Also where CPU profiles go: they are never committed. */
export const LOCAL_DIR = join(REPO_ROOT, 'bench-results');

export function saveResults(latestName: string, stampPrefix: string, startedAt: string, result: unknown, committed: boolean): readonly string[] {
  const dir = committed ? COMMITTED_DIR : LOCAL_DIR;
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(result, null, 2)}\n`;
  const files = [join(dir, latestName), join(dir, `${stampPrefix}-${startedAt.replace(/[:.]/g, '-')}.json`)];
  for (const file of files) writeFileSync(file, text);
  return files;
}
