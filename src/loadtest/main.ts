/**
 * `npm run loadtest`: exit 0 with a summary, 2 for bad arguments or configuration (with a message
 * that names the flag or key), 1 when the target cannot be reached or refuses the load test's
 * tokens — one line each, never a stack trace.
 */
import { ConfigError, loadConfig } from '../config/load.ts';
import { UsageError } from '../cli/args.ts';
import { loadtestHelp, parseLoadtestArgs } from './args.ts';
import { CatalogUnavailableError } from './catalog-vocabulary.ts';
import { LoadtestSetupError, runLoadtest } from './loadtest.ts';
import { writeJson, writeReport } from './report-files.ts';
import { formatCirculation, runCirculation } from './circulation.ts';
import { ServerStartError } from './server-process.ts';
import { formatSummary } from './summary.ts';
import { UnreachableError } from './target.ts';

const EXPECTED = [CatalogUnavailableError, LoadtestSetupError, ServerStartError, UnreachableError];

/** Prints the summary, and with `--json` the result on stdout (the summary then goes to stderr); exit 0. */
function printed(summary: string, result: unknown, json: boolean): number {
  if (json) {
    process.stderr.write(summary);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(summary);
  }
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  let options;
  let config;
  try {
    options = parseLoadtestArgs(argv);
    if (options === 'help') {
      process.stdout.write(loadtestHelp());
      return 0;
    }
    config = loadConfig(options.config === undefined ? {} : { file: options.config });
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`loadtest: ${err.message}\nRun 'npm run loadtest -- --help' for the flags.\n`);
      return 2;
    }
    throw err;
  }
  try {
    if (options.circulation) {
      const result = await runCirculation(
        {
          connections: options.connections,
          duration: options.duration ?? 30,
          loansPerSecond: options.loansPerSecond,
          allowedLagMs: options.allowedLagMs,
          zipf: options.zipf,
          distinct: options.distinct,
          filters: options.filters,
          seed: options.seed,
          ...(options.config === undefined ? {} : { config: options.config }),
        },
        config,
        (message) => process.stderr.write(`loadtest: ${message}\n`),
      );
      const file = writeJson(options.out, 'circulation', result);
      const summary = `${formatCirculation(result)}report       ${file}\n`;
      return printed(summary, result, options.json);
    }
    const result = await runLoadtest(options, config, {
      log: (message) => process.stderr.write(`loadtest: ${message}\n`),
      command: ['npm run loadtest', ...(argv.length === 0 ? [] : ['--', ...argv])].join(' '),
      progressBar: true,
    });
    const files = writeReport(options.out, result);
    const summary = `${formatSummary(result)}report      ${files.html}\n            ${files.json}\n`;
    return printed(summary, result, options.json);
  } catch (err) {
    if (EXPECTED.some((kind) => err instanceof kind)) {
      process.stderr.write(`loadtest: ${(err as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`loadtest: failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
