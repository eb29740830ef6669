/**
 * `npm run bench`: the gateway against its own ceiling, side by side (see throughput-bench.ts),
 * with `--http2` against nginx over TLS + HTTP/2 (http2-bench.ts), with `--tls` TLS session resumption across two workers (tls-bench.ts), with `--memory` the cache-memory check (memory-bench.ts), with `--shared-tier` the fleet's Redis
 * tier (shared-tier-bench.ts), with `--hit-ratio` the store's hit ratios on replayed traces
 * (hit-ratio-bench.ts), with `--tiers` the hit ratio of memory over disk (tiers-bench.ts), with `--ab` or `--disk-hits` this gateway against another checkout and disk hits against memory hits (ab-bench.ts), with `--instructions` the instructions a request under callgrind (instructions-bench.ts). Prints markdown for docs/benchmarks.md and
 * keeps the JSON in bench/results/.
 */
import { UsageError } from '../src/cli/args.ts';
import { BENCH_HELP, parseBenchArgs, type BenchOptions } from './args.ts';
import { http2Bench, http2Markdown } from './http2-bench.ts';
import { tlsBench, tlsMarkdown } from './tls-bench.ts';
import { hitRatioBench, hitRatioMarkdown } from './hit-ratio-bench.ts';
import { ladderBench, ladderMarkdown } from './ladder-bench.ts';
import { memoryBench, memoryMarkdown } from './memory-bench.ts';
import { saveResults } from './results-file.ts';
import { sharedTierBench, sharedTierMarkdown } from './shared-tier-bench.ts';
import { throughputBench, throughputMarkdown } from './throughput-bench.ts';
import { tiersBench, tiersMarkdown } from './tiers-bench.ts';
import { abBench, abMarkdown } from './ab-bench.ts';
import { restartBench, restartMarkdown } from './restart-bench.ts';
import { instructionsBench, instructionsMarkdown } from './instructions-bench.ts';

type Bench<R> = (options: BenchOptions, command: string, log: (message: string) => void) => Promise<R>;

/** One mode: run it, print its markdown, keep its JSON. */
async function runMode<R extends { readonly startedAt: string }>(
  options: BenchOptions,
  command: string,
  log: (message: string) => void,
  bench: Bench<R>,
  markdown: (report: R) => string,
  latestName: string,
  stampPrefix: string,
): Promise<number> {
  const report = await bench(options, command, log);
  process.stdout.write(markdown(report));
  if (options.save) log(`saved ${saveResults(latestName, stampPrefix, report.startedAt, report, options.updateCommitted).join(', ')}`);
  return 0;
}

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
    const run = <R extends { readonly startedAt: string }>(
      bench: Bench<R>,
      markdown: (report: R) => string,
      latestName: string,
      stampPrefix: string,
    ): Promise<number> => runMode(options, command, log, bench, markdown, latestName, stampPrefix);
    if (options.ladder) return await run(ladderBench, ladderMarkdown, 'ladder-latest.json', 'ladder');
    if (options.sharedTier) return await run(sharedTierBench, sharedTierMarkdown, 'shared-tier-latest.json', 'shared-tier');
    if (options.http2) return await run(http2Bench, http2Markdown, 'http2-latest.json', 'http2');
    if (options.tls) {
      // Each certificate's runs keep a latest of their own: one run does not stand for the other.
      const name = options.tlsKey === 'p256' ? 'tls' : `tls-${options.tlsKey}`;
      return await run(tlsBench, tlsMarkdown, `${name}-latest.json`, name);
    }
    if (options.hitRatio) return await run(hitRatioBench, hitRatioMarkdown, 'hit-ratio-latest.json', 'hit-ratio');
    if (options.instructions) return await run(instructionsBench, instructionsMarkdown, 'instructions-latest.json', 'instructions');
    if (options.diskHits) return await run(abBench, abMarkdown, 'disk-hits-latest.json', 'disk-hits');
    if (options.abBase !== undefined) return await run(abBench, abMarkdown, 'ab-latest.json', 'ab');
    if (options.restart) return await run(restartBench, restartMarkdown, 'restart-latest.json', 'restart');
    if (options.tiers) return await run(tiersBench, tiersMarkdown, 'tiers-latest.json', 'tiers');
    if (options.memory) return await run(memoryBench, memoryMarkdown, 'memory-latest.json', 'memory');
    return await run(throughputBench, throughputMarkdown, 'latest.json', 'throughput');
  } catch (err) {
    process.stderr.write(`bench: failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
