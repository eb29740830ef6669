/**
 * `npm run bench -- --instructions`: the instructions a gateway process executes per request, counted
 * by `valgrind --tool=callgrind`, for memory hits (one URL; 1,000 URLs in a cycle; a gzip client) and
 * disk hits (1,000 URLs over a 1 MiB memory, every one promoted; and with admission, the default).
 * With `--ab DIR` the gateway of another checkout is counted the same way, and each mode's count is
 * given over DIR's.
 *
 * Why a count and not a rate: on a shared two-core machine a rate moves by ±10 % from run to run
 * (docs/benchmarks.md), more than the changes it is asked to judge, while the instructions one
 * request costs repeat within about 0.3 % whatever else the machine is doing. A count is not a
 * time: it weighs a cache miss of the CPU's as one instruction, and it counts the collector's
 * threads, serialised, as the main thread's. So it says which build does less work a request, and
 * where (the dump each run keeps, for `callgrind_annotate`), and the wall-clock modes say how fast.
 *
 * Each gateway runs under callgrind with instrumentation off (a few times slower than native) while it
 * warms its cache and runs --warm requests, so its JIT reaches its steady state; then instrumentation
 * is turned on, 2,000 more requests run, the counters are zeroed, --requests requests are counted and
 * the counts dumped. The load comes from this process over 16 keep-alive connections; only the
 * gateway is counted.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { machineLine } from './table.ts';
import { findHotTarget, warmCache } from './throughput.ts';

const run = promisify(execFile);

const URLS = 1000;
const CONNECTIONS = 16;
const MIB = 1024 * 1024;

interface Mode {
  readonly id: string;
  readonly label: string;
  /** One URL, or the 1,000 in a cycle. */
  readonly hot: boolean;
  readonly gzip: boolean;
  /** Memory of 1 MiB over the disk tier, so that each request is a disk hit; `admission` as configured. */
  readonly disk?: { readonly admission: boolean };
}

const MODES: readonly Mode[] = [
  { id: 'memory-hot', label: 'memory hit, one URL', hot: true, gzip: false },
  { id: 'memory-cycle', label: 'memory hit, 1,000 URLs', hot: false, gzip: false },
  { id: 'memory-cycle-gzip', label: 'memory hit, 1,000 URLs, gzip client', hot: false, gzip: true },
  { id: 'disk-cycle', label: 'disk hit, every one promoted', hot: false, gzip: false, disk: { admission: false } },
  { id: 'disk-cycle-gzip', label: 'disk hit, every one promoted, gzip client', hot: false, gzip: true, disk: { admission: false } },
  { id: 'disk-admitting', label: 'disk hit or memory hit, with admission (the default)', hot: false, gzip: false, disk: { admission: true } },
];

export interface InstructionsReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'instructions';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: { readonly warm: number; readonly requests: number };
  /** The other checkout (`--ab`); empty when none was. */
  readonly base: string;
  readonly results: readonly {
    readonly id: string;
    readonly label: string;
    /** Instructions a request, this checkout's gateway. */
    readonly perRequest: number;
    /** The same for the base's; undefined without `--ab`. */
    readonly basePerRequest?: number;
  }[];
}

/** The total of a callgrind dump (its `summary:` line). */
function dumpTotal(file: string): number {
  const match = /^summary: (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (match === null) throw new Error(`${file} has no summary line`);
  return Number(match[1]);
}

async function countInstructions(
  fleet: Fleet,
  origin: ServerProcess,
  checkout: string | undefined,
  mode: Mode,
  load: { readonly authorization: string; readonly targets: readonly string[]; readonly warm: number; readonly requests: number },
): Promise<number> {
  const name = `${checkout === undefined ? 'this' : 'base'}-${mode.id}`;
  const out = join(fleet.logDir, `callgrind-${name}`);
  const env: Record<string, string> = {
    CATALOG_GATEWAY_ACCESS_LOG: 'true',
    // Set here, so that the bin's launcher does not replace the process (execve), which callgrind would not follow.
    MALLOC_ARENA_MAX: '2',
    ...(mode.disk === undefined ? {} : { CATALOG_GATEWAY_CACHE_MAX_BYTES: String(MIB), CATALOG_GATEWAY_CACHE_ADMISSION: String(mode.disk.admission) }),
  };
  const gateway = await fleet.gateway(name, origin, env, [], checkout, {
    launcher: ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${out}.%p`],
    startTimeoutMs: 600_000,
  });
  const agent = new Agent({ connections: CONNECTIONS });
  try {
    const targets = mode.hot ? load.targets.slice(0, 1) : load.targets;
    await warmCache(gateway.url, targets, load.authorization, 8, agent);
    let next = 0;
    const headers = { authorization: load.authorization, ...(mode.gzip ? { 'accept-encoding': 'gzip' } : {}) };
    const ask = async (count: number): Promise<void> => {
      let left = count;
      const connection = async (): Promise<void> => {
        while (left-- > 0) {
          const { statusCode, body } = await request(`${gateway.url}${targets[next++ % targets.length] ?? ''}`, { headers, dispatcher: agent });
          await body.dump();
          if (statusCode !== 200) throw new Error(`${name}: a request answered ${statusCode}`);
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, connection));
    };
    const control = async (...args: string[]): Promise<void> => {
      await run('callgrind_control', [...args, String(gateway.pid)]);
    };
    await ask(load.warm);
    await control('--instr=on');
    await ask(2000);
    await control('--zero');
    await ask(load.requests);
    await control('--dump=measured');
    const dump = readdirSync(fleet.logDir)
      .map((file) => join(fleet.logDir, file))
      .find((file) => file.startsWith(`${out}.${gateway.pid}.`) && readFileSync(file, 'utf8').includes('Trigger: dump measured'));
    if (dump === undefined) throw new Error(`${name}: callgrind wrote no dump`);
    return dumpTotal(dump) / load.requests;
  } finally {
    await agent.close();
    // Killed, not stopped: a drain under callgrind takes long, and nothing after the dump is counted.
    process.kill(gateway.pid, 'SIGKILL');
  }
}

export async function instructionsBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<InstructionsReport> {
  const startedAt = new Date().toISOString();
  const base = options.abBase === undefined ? undefined : resolve(options.abBase);
  const fleet = new Fleet(options.dataDir);
  try {
    const origin = await fleet.origin();
    const { space, authorization } = await fleet.reader();
    const hot = await findHotTarget(origin.url, space, authorization);
    const targets = [hot, ...Array.from({ length: URLS - 1 }, () => space.take())];
    const load = { authorization, targets, warm: options.warm, requests: options.countedRequests };
    const results: InstructionsReport['results'][number][] = [];
    for (const mode of MODES) {
      log(`${mode.label}: counting this gateway…`);
      const perRequest = await countInstructions(fleet, origin, undefined, mode, load);
      let basePerRequest: number | undefined;
      if (base !== undefined) {
        log(`${mode.label}: counting ${base}'s gateway…`);
        basePerRequest = await countInstructions(fleet, origin, base, mode, load);
      }
      log(`${mode.label}: ${Math.round(perRequest)} instructions a request${basePerRequest === undefined ? '' : ` (base ${Math.round(basePerRequest)})`}`);
      results.push({ id: mode.id, label: mode.label, perRequest, ...(basePerRequest === undefined ? {} : { basePerRequest }) });
    }
    return {
      tool: 'catalog-gateway bench',
      mode: 'instructions',
      startedAt,
      command,
      machine: machineInfo(),
      settings: { warm: options.warm, requests: options.countedRequests },
      base: base ?? '',
      results,
    };
  } finally {
    await fleet.close();
  }
}

export function instructionsMarkdown(r: InstructionsReport): string {
  const withBase = r.base !== '';
  const memory = r.results.find((m) => m.id === 'memory-cycle')?.perRequest;
  return [
    `### Instructions a request${withBase ? `, this gateway and ${r.base}'s` : ''} (${r.startedAt})`,
    '',
    machineLine(r.machine),
    '',
    withBase ? '| mode | this gateway | base | this over base | × a memory hit on 1,000 URLs |' : '| mode | instructions | × a memory hit on 1,000 URLs |',
    withBase ? '|---|---:|---:|---:|---:|' : '|---|---:|---:|',
    ...r.results.map((m) => {
      const overMemory = memory === undefined ? '' : (m.perRequest / memory).toFixed(2);
      return withBase
        ? `| ${m.label} | ${Math.round(m.perRequest)} | ${Math.round(m.basePerRequest ?? 0)} | ${(m.perRequest / (m.basePerRequest ?? m.perRequest)).toFixed(3)} | ${overMemory} |`
        : `| ${m.label} | ${Math.round(m.perRequest)} | ${overMemory} |`;
    }),
    '',
    `callgrind, ${r.settings.requests} requests counted after ${r.settings.warm} uncounted ones, 16 connections. \`${r.command}\``,
    '',
  ].join('\n');
}
