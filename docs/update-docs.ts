/** `npm run docs`: rewrites the generated sections of the docs (today: the configuration table). */
import { readFileSync, writeFileSync } from 'node:fs';
import { configTable, withConfigTable } from '../src/config/config-table.ts';

const path = new URL('configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withConfigTable(before, configTable());
if (after === before) process.stdout.write('docs/configuration.md is up to date\n');
else {
  writeFileSync(path, after);
  process.stdout.write('docs/configuration.md: configuration table rewritten\n');
}
