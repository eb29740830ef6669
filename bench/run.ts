/**
 * `npm run bench`: the gateway against its own ceiling, side by side (see throughput-bench.ts),
 * with `--http2` against nginx over TLS + HTTP/2 (http2-bench.ts), with `--memory` the cache-memory check (memory-bench.ts), with `--shared-tier` the fleet's Redis
 * tier (shared-tier-bench.ts), with `--hit-ratio` the store's hit ratios on replayed traces
 * (hit-ratio-bench.ts). Prints markdown for docs/benchmarks.md and
 * keeps the JSON in bench/results/.
 */
import { UsageError } from '../src/cli/args.ts';
import { BENCH_HELP, parseBenchArgs, type BenchOptions } from './args.ts';
import { http2Bench, http2Markdown } from './http2-bench.ts';
import { hitRatioBench, hitRatioMarkdown } from './hit-ratio-bench.ts';
import { ladderBench, ladderMarkdown } from './ladder-bench.ts';
import { memoryBench, memoryMarkdown } from './memory-bench.ts';
import { saveResults } from './results-file.ts';
import { sharedTierBench, sharedTierMarkdown } from './shared-tier-bench.ts';
import { throughputBench, throughputMarkdown } from './throughput-bench.ts';

async function main(argv: readonly string[]): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseBenchArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\nRun 'npm run bench -- --help' for the flags.\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(BENCH_HELP());
    return 0;
  }
  const command = ['npm run bench', ...(argv.length === 0 ? [] : ['--', ...argv])].join(' ');
  const log = (message: string): void => {
    process.stderr.write(`bench: ${message}\n`);
  };
  try {
    if (options.ladder) {
      const report = await ladderBench(options, command, log);
      process.stdout.write(ladderMarkdown(report));
      if (options.save) log(`saved ${saveResults('ladder-latest.json', 'ladder', report.startedAt, report, options.updateCommitted).join(', ')}`);
      return 0;
    }
    if (options.sharedTier) {
      const report = await sharedTierBench(options, command, log);
      process.stdout.write(sharedTierMarkdown(report));
      if (options.save) log(`saved ${saveResults('shared-tier-latest.json', 'shared-tier', report.startedAt, report, options.updateCommitted).join(', ')}`);
      return 0;
    }
    if (options.http2) {
      const report = await http2Bench(options, command, log);
      process.stdout.write(http2Markdown(report));
      if (options.save) log(`saved ${saveResults('http2-latest.json', 'http2', report.startedAt, report, options.updateCommitted).join(', ')}`);
      return 0;
    }
    if (options.hitRatio) {
      const report = await hitRatioBench(options, command, log);
      process.stdout.write(hitRatioMarkdown(report));
      if (options.save) log(`saved ${saveResults('hit-ratio-latest.json', 'hit-ratio', report.startedAt, report, options.updateCommitted).join(', ')}`);
      return 0;
    }
    if (options.memory) {
      const report = await memoryBench(options, command, log);
      process.stdout.write(memoryMarkdown(report));
      if (options.save) log(`saved ${saveResults('memory-latest.json', 'memory', report.startedAt, report, options.updateCommitted).join(', ')}`);
      return 0;
    }
    const report = await throughputBench(options, command, log);
    process.stdout.write(throughputMarkdown(report));
    if (options.save) log(`saved ${saveResults('latest.json', 'throughput', report.startedAt, report, options.updateCommitted).join(', ')}`);
    return 0;
  } catch (err) {
    process.stderr.write(`bench: failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
