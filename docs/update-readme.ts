/** `npm run docs`: rewrites the README's generated sections (today: the configuration table). */
import { readFileSync, writeFileSync } from 'node:fs';
import { configTable, withConfigTable } from '../src/config/config-table.ts';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withConfigTable(before, configTable());
if (after === before) process.stdout.write('README.md is up to date\n');
else {
  writeFileSync(path, after);
  process.stdout.write('README.md: configuration table rewritten\n');
}
