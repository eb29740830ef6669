/**
 * `npm run bench -- --restart`: the origin's offload across a gateway restart, as an operator's
 * deploy does it. One gateway (and, for SIGUSR2, a primary with two workers) serves a steady load
 * of searches in Zipf order over a fixed set of queries, at a fixed rate; after a warm-up, the
 * offload (1 − origin calls / answers) of the window before the restart is set against the
 * window after it, for a stop (SIGTERM), a kill (SIGKILL), a rolling restart (SIGUSR2) and, as
 * the control, a stop without the disk tier (what every restart was before it).
 */
import { join } from 'node:path';
import { freePort } from '../src/cli/free-port.ts';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { runLoad } from '../src/loadtest/load-run.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { cleanEnv, CLI, GATEWAY_NODE_FLAGS, startServerProcess, type ServerProcess } from '../src/loadtest/server-process.ts';
import { originCounters, scrapeMetrics } from '../src/loadtest/server-metrics.ts';
import { ZipfSampler } from '../src/loadtest/zipf.ts';
import { SeededRandom } from '../src/origin/random.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { QuerySpace } from './query-space.ts';
import { machineLine } from './table.ts';

/** Queries asked, in Zipf order (α 1): a working set the memory tier holds whole. */
const QUERIES = 2000;
const RATE = 400;
const CONNECTIONS = 16;
const WARM_SECONDS = 20;

type Variant = 'SIGTERM' | 'SIGKILL' | 'SIGUSR2' | 'SIGTERM, no disk tier';
const VARIANTS: readonly Variant[] = ['SIGTERM', 'SIGKILL', 'SIGUSR2', 'SIGTERM, no disk tier'];

export interface Window {
  readonly answers: number;
  readonly errors: number;
  readonly originCalls: number;
  readonly offload: number;
}

export interface RestartRow {
  readonly variant: Variant;
  readonly before: Window;
  readonly after: Window;
  /** Offload after over offload before. */
  readonly kept: number;
}

export interface RestartReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'restart';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: { readonly queries: number; readonly rate: number; readonly windowSeconds: number; readonly warmSeconds: number };
  readonly rows: readonly RestartRow[];
}

export async function restartBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<RestartReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  const rows: RestartRow[] = [];
  try {
    const origin = await fleet.origin();
    const space = new QuerySpace(readCatalogVocabulary(join(fleet.dataDir, 'catalog.db')));
    const queries = Array.from({ length: QUERIES }, () => space.take());
    const headers = {
      authorization: `Bearer ${await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 })}`,
    };
    const originCalls = async (): Promise<number> => originCounters(await scrapeMetrics(origin.adminUrl ?? '')).requests;
    for (const [n, variant] of VARIANTS.entries()) {
      const port = await freePort();
      const env = cleanEnv({
        CATALOG_DATA_DIR: fleet.dataDir,
        CATALOG_GATEWAY_PORT: String(port),
        CATALOG_GATEWAY_ACCESS_LOG: 'false',
        CATALOG_GATEWAY_CACHE_DISK_PATH: join(fleet.logDir, `restart-${n}-cache`),
        CATALOG_GATEWAY_CACHE_DISK_ENABLED: String(variant !== 'SIGTERM, no disk tier'),
        CATALOG_GATEWAY_WORKERS: variant === 'SIGUSR2' ? '2' : '1',
      });
      const start = (): Promise<ServerProcess> =>
        startServerProcess({
          name: `gateway-${n}`,
          args: [CLI, 'gateway', '--admin-port', '0', '--origin', origin.url, '--origin-probe', `${origin.adminUrl ?? ''}/readyz`],
          env,
          nodeFlags: GATEWAY_NODE_FLAGS,
          logFile: join(fleet.logDir, `gateway-${n}-${Date.now()}.log`),
        });
      let gateway = await start();
      const zipf = new ZipfSampler(QUERIES, 1, new SeededRandom(7 + n));
      const window = async (seconds: number): Promise<Window> => {
        const before = await originCalls();
        const run = await runLoad({
          urls: [`http://127.0.0.1:${port}`],
          connections: CONNECTIONS,
          duration: seconds,
          rate: RATE,
          requests: { next: () => ({ path: queries[zipf.next()] ?? '/', headers }) },
        });
        const calls = (await originCalls()) - before;
        const answers = run.statusCounts['200'] ?? 0;
        return { answers, errors: run.errorCount + run.non2xx, originCalls: calls, offload: answers === 0 ? 0 : 1 - calls / answers };
      };
      log(`${variant}: warming for ${WARM_SECONDS} s, then ${options.duration} s before the restart…`);
      await window(WARM_SECONDS);
      const before = await window(options.duration);
      if (variant === 'SIGUSR2') {
        // The roll happens during the window after, as it does under a deploy's traffic.
        process.kill(gateway.pid, 'SIGUSR2');
      } else if (variant === 'SIGKILL') {
        process.kill(gateway.pid, 'SIGKILL');
        await gateway.stop();
        gateway = await start();
      } else {
        await gateway.stop();
        gateway = await start();
      }
      log(`${variant}: ${options.duration} s after the restart…`);
      const after = await window(options.duration);
      await gateway.stop();
      rows.push({ variant, before, after, kept: before.offload === 0 ? 0 : after.offload / before.offload });
      log(`${variant}: offload ${(before.offload * 100).toFixed(1)} % before, ${(after.offload * 100).toFixed(1)} % after`);
    }
    return {
      tool: 'catalog-gateway bench',
      mode: 'restart',
      startedAt,
      command,
      machine: machineInfo(),
      settings: { queries: QUERIES, rate: RATE, windowSeconds: options.duration, warmSeconds: WARM_SECONDS },
      rows,
    };
  } finally {
    await fleet.close();
  }
}

const percent = (n: number): string => `${(n * 100).toFixed(1)} %`;

export function restartMarkdown(r: RestartReport): string {
  return [
    `### The origin's offload across a restart (${r.startedAt})`,
    '',
    machineLine(r.machine),
    '',
    `| restart | offload, ${r.settings.windowSeconds} s before | offload, ${r.settings.windowSeconds} s after | after / before | origin calls before / after | failed requests after |`,
    '|---|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (row) =>
        `| ${row.variant} | ${percent(row.before.offload)} | ${percent(row.after.offload)} | ${row.kept.toFixed(3)} | ${row.before.originCalls} / ${row.after.originCalls} | ${row.after.errors} |`,
    ),
    '',
    `${r.settings.queries.toLocaleString('en-US')} searches in Zipf order (α 1) at ${r.settings.rate} req/s, after ${r.settings.warmSeconds} s of warm-up. \`${r.command}\``,
    '',
  ].join('\n');
}
