/** `npm run docs`: rewrites what the docs and the default file take from the schema (src/config/schema.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { configTable, withConfigTable } from '../src/config/config-table.ts';
import { defaultFile } from '../src/config/default-file.ts';
import { DEFAULT_CONFIG_FILE } from '../src/config/load.ts';

function rewrite(path: URL | string, name: string, make: (before: string) => string): void {
  const before = readFileSync(path, 'utf8');
  const after = make(before);
  if (after === before) process.stdout.write(`${name} is up to date\n`);
  else {
    writeFileSync(path, after);
    process.stdout.write(`${name} rewritten\n`);
  }
}

rewrite(new URL('configuration.md', import.meta.url), 'docs/configuration.md', (page) => withConfigTable(page, configTable()));
rewrite(DEFAULT_CONFIG_FILE, 'config/default.jsonc', defaultFile);
