/**
 * `npm run bench -- --tls`: TLS session resumption across the workers of one host. A gateway with
 * two workers (which share the key that encrypts session tickets, listeners/ticket-keys.ts) is
 * asked by `openssl s_time` for new connections, each a full handshake (`-new`), and for
 * connections that resume the first one's session (`-reuse`), over TLS 1.2 and TLS 1.3, each for
 * --duration seconds, interleaved by round. The kernel hands each connection to either worker,
 * so a resumed handshake is one worker taking a ticket the other may have issued.
 *
 * s_time fetches `/` on each connection (`-www`): a TLS 1.3 ticket comes after the handshake, and
 * a client that reads nothing never sees it (without `-www` no TLS 1.3 connection resumed). Each
 * connection of a `-reuse` run is counted as resumed or not from s_time's own marks (`r`
 * resumed, `*` full); the figure is
 * connections per second of wall time, the gateway's CPU per connection beside it, and resumed
 * over new per round.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { makeSelfSignedCertificate } from '../src/cli/local-certificate.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { ALL_CORES, cpuSeconds, pin } from './process-cpu.ts';
import { spread, type Spread } from './stats.ts';
import { machineLine } from './table.ts';

const run = promisify(execFile);

type Version = 'TLSv1.2' | 'TLSv1.3';
type Handshake = 'new' | 'reuse';

interface Scenario {
  readonly id: string;
  readonly version: Version;
  readonly handshake: Handshake;
}

const SCENARIOS: readonly Scenario[] = (['TLSv1.2', 'TLSv1.3'] as const).flatMap((version) =>
  (['new', 'reuse'] as const).map((handshake) => ({ id: `${version}-${handshake}`, version, handshake })),
);

export interface TlsRun {
  readonly round: number;
  readonly connections: number;
  readonly perSecond: number;
  /** Those s_time marked resumed (its first connection, which makes the session, is not among `connections`). */
  readonly resumed: number;
  /** The gateway's CPU time (primary and workers) per connection, µs. */
  readonly serverCpuUs: number;
}

export interface TlsScenarioResult extends Scenario {
  readonly runs: readonly TlsRun[];
  readonly perSecond: Spread;
  readonly serverCpuUs: Spread;
}

export interface TlsReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'tls';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: { readonly duration: number; readonly rounds: number; readonly workers: 2; readonly certificate: string };
  readonly scenarios: readonly TlsScenarioResult[];
  /** Resumed connections per second over new ones, same version and round. */
  readonly resumedOverNew: Readonly<Record<Version, Spread>>;
}

/** s_time's summary: "N connections in Ts; …" then "N connections in T real seconds, …"; its marks, one a connection. */
export function parseSTime(stdout: string): { readonly connections: number; readonly realSeconds: number; readonly resumed: number; readonly full: number } {
  const real = /(\d+) connections in (\d+) real seconds/.exec(stdout);
  if (real === null) throw new Error(`openssl s_time printed no result:\n${stdout.slice(-2000)}`);
  let resumed = 0;
  let full = 0;
  for (const line of stdout.split('\n')) {
    if (!/^[r*]+$/.test(line.trim())) continue;
    for (const mark of line.trim())
      if (mark === 'r') resumed++;
      else full++;
  }
  return { connections: Number(real[1]), realSeconds: Number(real[2]), resumed, full };
}

async function measure(s: Scenario, host: string, ca: string, pid: number, seconds: number, round: number): Promise<TlsRun> {
  const version = s.version === 'TLSv1.2' ? '-tls1_2' : '-tls1_3';
  const cpuBefore = cpuSeconds(pid);
  const { stdout } = await run('openssl', ['s_time', '-connect', host, `-${s.handshake}`, version, '-CAfile', ca, '-www', '/', '-time', String(seconds)], {
    env: { PATH: process.env.PATH },
    maxBuffer: 16 << 20,
  });
  const cpu = cpuSeconds(pid) - cpuBefore;
  const result = parseSTime(stdout);
  return {
    round,
    connections: result.connections,
    perSecond: result.connections / Math.max(result.realSeconds, 1),
    resumed: s.handshake === 'reuse' ? result.resumed : 0,
    serverCpuUs: result.connections === 0 ? Number.NaN : (cpu * 1e6) / result.connections,
  };
}

export async function tlsBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<TlsReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  // In a directory of their own, as a deployment keeps them (the gateway watches it).
  const tlsDir = join(fleet.logDir, 'tls');
  mkdirSync(tlsDir);
  const files = { cert: join(tlsDir, 'cert.pem'), key: join(tlsDir, 'key.pem') };
  makeSelfSignedCertificate(files, 'catalog-gateway bench', 2);
  const trusting = new Agent({ connect: { ca: readFileSync(files.cert) } });
  try {
    log('starting the origin and a gateway of two workers on TLS…');
    const origin = await fleet.origin();
    const gateway = await fleet.gateway('gateway-tls-2w', origin, {
      CATALOG_GATEWAY_WORKERS: '2',
      // Each worker accepts its own connections: the primary's hand-off is no part of a handshake's cost.
      CATALOG_GATEWAY_WORKER_ACCEPT: 'workers',
      CATALOG_GATEWAY_ACCESS_LOG: 'true',
      CATALOG_HTTP_TLS_CERT: files.cert,
      CATALOG_HTTP_TLS_KEY: files.key,
    });
    // An answer (of any status) from the port before the first run.
    await (await request(gateway.url, { dispatcher: trusting })).body.dump();
    pin(gateway.pid, ALL_CORES);
    const host = new URL(gateway.url).host;
    const runs = new Map<string, TlsRun[]>(SCENARIOS.map((s) => [s.id, []]));
    for (let round = 1; round <= options.rounds; round++) {
      const order = SCENARIOS.map((_, i) => SCENARIOS[(i + round) % SCENARIOS.length] ?? SCENARIOS[0]);
      for (const s of order) {
        if (s === undefined) continue;
        const result = await measure(s, host, files.cert, gateway.pid, options.duration, round);
        runs.get(s.id)?.push(result);
        log(
          `round ${round}/${options.rounds} ${s.id}: ${Math.round(result.perSecond)} connections/s, server ${result.serverCpuUs.toFixed(0)} µs each${s.handshake === 'reuse' ? `, ${result.resumed} of ${result.connections} resumed` : ''}`,
        );
      }
    }
    const scenarios = SCENARIOS.map((s): TlsScenarioResult => {
      const own = runs.get(s.id) ?? [];
      return { ...s, runs: own, perSecond: spread(own.map((r) => r.perSecond)), serverCpuUs: spread(own.map((r) => r.serverCpuUs)) };
    });
    const ratio = (version: Version): Spread => {
      const of = (handshake: Handshake): readonly TlsRun[] => scenarios.find((s) => s.version === version && s.handshake === handshake)?.runs ?? [];
      const fresh = new Map(of('new').map((r) => [r.round, r.perSecond]));
      return spread(of('reuse').flatMap((r) => (fresh.get(r.round) ? [r.perSecond / (fresh.get(r.round) ?? 1)] : [])));
    };
    return {
      tool: 'catalog-gateway bench',
      mode: 'tls',
      startedAt,
      command,
      machine: machineInfo(),
      settings: { duration: options.duration, rounds: options.rounds, workers: 2, certificate: 'self-signed ECDSA P-256' },
      scenarios,
      resumedOverNew: { 'TLSv1.2': ratio('TLSv1.2'), 'TLSv1.3': ratio('TLSv1.3') },
    };
  } finally {
    await trusting.close();
    await fleet.close();
  }
}

export function tlsMarkdown(report: TlsReport): string {
  const range = (s: Spread, f: (n: number) => string): string => `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
  const whole = (n: number): string => Math.round(n).toLocaleString('en-US');
  const rows = report.scenarios.map((s) => {
    const resumed = s.handshake === 'reuse' ? `${s.runs.reduce((n, r) => n + r.resumed, 0)} of ${s.runs.reduce((n, r) => n + r.connections, 0)}` : '—';
    return `| ${s.version} | ${s.handshake === 'new' ? 'new (full handshake)' : 'resumed (session ticket)'} | ${range(s.perSecond, whole)} | ${s.serverCpuUs.median.toFixed(0)} | ${resumed} |`;
  });
  const r = report.resumedOverNew;
  return `${[
    '| TLS | connection | connections/s median (min–max) | gateway CPU µs/connection | resumed |',
    '|---|---|---:|---:|---:|',
    ...rows,
    '',
    `Resumed over new, same round: TLS 1.2 ${range(r['TLSv1.2'], (n) => `${n.toFixed(2)}×`)}, TLS 1.3 ${range(r['TLSv1.3'], (n) => `${n.toFixed(2)}×`)}.`,
    `openssl s_time, one connection at a time, \`GET /\` on each; gateway of ${report.settings.workers} workers on every core; ${report.settings.rounds} rounds × ${report.settings.duration} s, order rotated each round; ${report.settings.certificate}.`,
    `Machine: ${machineLine(report.machine)}. Command: \`${report.command}\`.`,
  ].join('\n')}\n`;
}
