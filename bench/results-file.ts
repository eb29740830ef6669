/** Bench results kept in the repository: `<name>-latest.json` plus a timestamped copy. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './fleet.ts';

export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');

export function saveResults(latestName: string, stampPrefix: string, startedAt: string, result: unknown): readonly string[] {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const text = `${JSON.stringify(result, null, 2)}\n`;
  const files = [join(RESULTS_DIR, latestName), join(RESULTS_DIR, `${stampPrefix}-${startedAt.replace(/[:.]/g, '-')}.json`)];
  for (const file of files) writeFileSync(file, text);
  return files;
}
