import { statSync } from 'node:fs';
import { loadConfig } from '../../config/load.ts';
import { CatalogInUseError, catalogPath, seedCatalog } from '../../origin/seed.ts';
import { CommandRefusal, type Command } from '../command.ts';

export const seed: Command = {
  name: 'seed',
  summary: 'Build the catalog database: a deterministic catalog of books across a dozen branches (replaces the file, once no origin has it open).',
  flags: [
    { name: 'db', key: 'origin.db', value: 'PATH', description: 'database file to write (default <dataDir>/catalog.db)' },
    { name: 'books', key: 'origin.books', value: 'N', description: 'number of books to generate' },
  ],
  run(args) {
    const config = loadConfig(args.config);
    const path = catalogPath(config);
    const books = config['origin.books'];
    const started = performance.now();
    try {
      seedCatalog(path, books);
    } catch (err) {
      if (err instanceof CatalogInUseError) throw new CommandRefusal(err.message);
      throw err;
    }
    const seconds = (performance.now() - started) / 1000;
    const mib = statSync(path).size / (1024 * 1024);
    process.stdout.write(`seeded ${books} books into ${path} (${mib.toFixed(1)} MiB) in ${seconds.toFixed(1)} s\n`);
    return Promise.resolve();
  },
};
