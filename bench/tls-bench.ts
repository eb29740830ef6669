/**
 * `npm run bench -- --tls`: TLS session resumption across the workers of one host. A gateway with
 * two workers (which share the key that encrypts session tickets, listeners/ticket-keys.ts) is
 * asked by `openssl s_time` for new connections, each a full handshake (`-new`), and for
 * connections that resume the first one's session (`-reuse`), over TLS 1.2 and TLS 1.3, each for
 * --duration seconds, interleaved by round. The kernel hands each connection to either worker,
 * so a resumed handshake is one worker taking a ticket the other may have issued. A bare
 * `node:https` server answering the gateway's own bytes (bare-server.ts, one process, same
 * certificate) runs in the same rounds: what any Node server pays for a connection. So do two of
 * them on one SO_REUSEPORT port sharing their ticket key (bare-https-workers.ts): the ceiling
 * for a server of two processes, which pays what the gateway's two workers pay for being two.
 * nginx with two workers (bench/nginx.ts) is the peer: its workers share the ticket key its master
 * made, its default, and it answers `/` itself as the gateway does (a 404).
 *
 * s_time fetches `/` on each connection (`-www`): a TLS 1.3 ticket comes after the handshake, and
 * a client that reads nothing never sees it (without `-www` no TLS 1.3 connection resumed). Each
 * connection of a `-reuse` run is counted as resumed or not from s_time's own marks (`r`
 * resumed, `*` full); the figure is
 * connections per second of wall time, the server's CPU per connection beside it, and resumed
 * over new per round.
 *
 * One s_time makes one connection at a time, so its rate is one over the sum of its own CPU, the
 * server's and the waits between them: the report gives s_time's CPU per connection too (from
 * bash's `times`), and what resumed over new would be if the server and the network took no time
 * at all (s_time's CPU alone), and if the client took none (the server's CPU alone, which is what
 * many clients in parallel on other machines would read). `--clients N` runs N s_time at once.
 *
 * With `--ab DIR` the gateway of another checkout (DIR, with its own `npm ci`), made and asked the
 * same way, runs in the same rounds too, and the report gives this gateway's server CPU a
 * connection over DIR's, round by round: a change's effect on a connection's cost, read beside a
 * build without it on the same machine at the same time.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Agent } from 'undici';
import { makeSelfSignedCertificate } from '../src/cli/local-certificate.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { startNginx, type NginxProcess } from './nginx.ts';
import { ALL_CORES, cpuSeconds, pin } from './process-cpu.ts';
import { spread, type Spread } from './stats.ts';
import { machineLine } from './table.ts';
import { captureResponse } from './throughput.ts';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';

const run = promisify(execFile);

type Version = 'TLSv1.2' | 'TLSv1.3';
type Handshake = 'new' | 'reuse';
/** `base`: the gateway of the checkout `--ab` names; `bare-workers`: two bare servers on one port; `nginx`: the peer, two workers. */
type Server = 'gateway' | 'bare' | 'bare-workers' | 'nginx' | 'base';

interface Scenario {
  readonly id: string;
  readonly server: Server;
  readonly version: Version;
  readonly handshake: Handshake;
}

const VERSIONS = ['TLSv1.2', 'TLSv1.3'] as const;
const HANDSHAKES = ['new', 'reuse'] as const;

function scenariosOf(servers: readonly Server[]): readonly Scenario[] {
  return servers.flatMap((server) =>
    VERSIONS.flatMap((version) => HANDSHAKES.map((handshake) => ({ id: `${server}-${version}-${handshake}`, server, version, handshake }))),
  );
}

export interface TlsRun {
  readonly round: number;
  readonly connections: number;
  readonly perSecond: number;
  /** Those s_time marked resumed (its first connection, which makes the session, is not among `connections`). */
  readonly resumed: number;
  /** The server's CPU time (its process tree: the gateway's primary and workers) per connection, µs. */
  readonly serverCpuUs: number;
  /** s_time's own CPU time per connection, µs. */
  readonly clientCpuUs: number;
}

export interface TlsScenarioResult extends Scenario {
  readonly runs: readonly TlsRun[];
  readonly perSecond: Spread;
  readonly serverCpuUs: Spread;
  readonly clientCpuUs: Spread;
}

/** Resumed over new, per round, for one server and version. */
export interface Ratios {
  /** Connections per second: the bench's headline. */
  readonly measured: Spread;
  /** s_time's CPU per connection: a server and network that took no time would read this. */
  readonly clientAlone: Spread;
  /** The server's CPU per connection: a server kept busy by clients elsewhere would read this. */
  readonly serverAlone: Spread;
}

export interface TlsReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'tls';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: {
    readonly duration: number;
    readonly rounds: number;
    readonly workers: 2;
    /** `gateway.workerAccept`. */
    readonly workerAccept: string;
    readonly certificate: string;
    /** s_time processes at once. */
    readonly clients: number;
    /** `--ab`: the other checkout, whose gateway is the `base` server. */
    readonly base?: string;
  };
  readonly scenarios: readonly TlsScenarioResult[];
  /** Resumed over new, same server, version and round. */
  readonly resumedOverNew: Readonly<Partial<Record<Server, Readonly<Record<Version, Ratios>>>>>;
  /** `--ab`: this gateway's server CPU a connection over the base's, same version, handshake and round. */
  readonly cpuOverBase?: Readonly<Record<Version, Readonly<Record<Handshake, Spread>>>>;
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

/** s_time's result with the CPU time it used (user and system, from bash's `times`), seconds. */
export interface STimeRun extends ReturnType<typeof parseSTime> {
  readonly cpuSeconds: number;
}

/** `times` prints the shell's user and system time, then its children's: `0m0.412s 0m0.126s`. */
function childrenCpuSeconds(times: string): number {
  const line = times.trim().split('\n').at(-1) ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  if (parts.length !== 2) throw new Error(`bash's times printed no children's line: ${times}`);
  return parts.reduce((sum, [, minutes, seconds]) => sum + Number(minutes) * 60 + Number(seconds), 0);
}

/** Runs `openssl s_time ARGS` under bash, which reports the CPU time it used. */
export async function runSTime(args: readonly string[]): Promise<STimeRun> {
  // `times` goes to stderr, so s_time's marks and summary stay alone on stdout.
  const { stdout, stderr } = await run('bash', ['-c', 'openssl s_time "$@" && times >&2', 's_time', ...args], {
    env: { PATH: process.env.PATH },
    maxBuffer: 16 << 20,
  });
  return { ...parseSTime(stdout), cpuSeconds: childrenCpuSeconds(stderr) };
}

async function measure(s: Scenario, host: string, ca: string, pid: number, seconds: number, clients: number, round: number): Promise<TlsRun> {
  const version = s.version === 'TLSv1.2' ? '-tls1_2' : '-tls1_3';
  const cpuBefore = cpuSeconds(pid);
  const results = await Promise.all(
    Array.from({ length: clients }, () => runSTime(['-connect', host, `-${s.handshake}`, version, '-CAfile', ca, '-www', '/', '-time', String(seconds)])),
  );
  const cpu = cpuSeconds(pid) - cpuBefore;
  const connections = results.reduce((n, r) => n + r.connections, 0);
  const per = (total: number): number => (connections === 0 ? Number.NaN : (total * 1e6) / connections);
  return {
    round,
    connections,
    perSecond: connections / Math.max(...results.map((r) => r.realSeconds), 1),
    resumed: s.handshake === 'reuse' ? results.reduce((n, r) => n + r.resumed, 0) : 0,
    serverCpuUs: per(cpu),
    clientCpuUs: per(results.reduce((sum, r) => sum + r.cpuSeconds, 0)),
  };
}

/** This gateway's server CPU a connection over the base's, round by round. */
export function cpuOverBase(scenarios: readonly TlsScenarioResult[], version: Version, handshake: Handshake): Spread {
  const of = (server: Server): readonly TlsRun[] =>
    scenarios.find((s) => s.server === server && s.version === version && s.handshake === handshake)?.runs ?? [];
  const base = new Map(of('base').map((r) => [r.round, r.serverCpuUs]));
  return spread(
    of('gateway').flatMap((r) => {
      const b = base.get(r.round);
      return b === undefined ? [] : [r.serverCpuUs / b];
    }),
  );
}

/** Resumed over new of one server and version, round by round, for each of a run's figures. */
function ratios(scenarios: readonly TlsScenarioResult[], server: Server, version: Version): Ratios {
  const of = (handshake: Handshake): readonly TlsRun[] =>
    scenarios.find((s) => s.server === server && s.version === version && s.handshake === handshake)?.runs ?? [];
  const fresh = new Map(of('new').map((r) => [r.round, r]));
  const over = (value: (r: TlsRun) => number, higherIsFaster: boolean): Spread =>
    spread(
      of('reuse').flatMap((r) => {
        const f = fresh.get(r.round);
        if (f === undefined) return [];
        return [higherIsFaster ? value(r) / value(f) : value(f) / value(r)];
      }),
    );
  return { measured: over((r) => r.perSecond, true), clientAlone: over((r) => r.clientCpuUs, false), serverAlone: over((r) => r.serverCpuUs, false) };
}

export async function tlsBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<TlsReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  // In a directory of their own, as a deployment keeps them (the gateway watches it).
  const tlsDir = join(fleet.logDir, 'tls');
  mkdirSync(tlsDir);
  const files = { cert: join(tlsDir, 'cert.pem'), key: join(tlsDir, 'key.pem') };
  makeSelfSignedCertificate(files, 'catalog-gateway bench', 2, undefined, options.tlsKey);
  const trusting = new Agent({ connect: { ca: readFileSync(files.cert) } });
  const baseDir = options.abBase === undefined ? undefined : resolve(options.abBase);
  let nginx: NginxProcess | undefined;
  try {
    log('starting the origin and a gateway of two workers on TLS…');
    const origin = await fleet.origin();
    const env = {
      CATALOG_GATEWAY_WORKERS: '2',
      // By default each worker accepts its own connections from a socket of its own: neither the
      // primary's hand-off nor the other worker's wake-up is part of a connection's cost.
      CATALOG_GATEWAY_WORKER_ACCEPT: options.workerAccept,
      CATALOG_GATEWAY_ACCESS_LOG: 'true',
      CATALOG_HTTP_TLS_CERT: files.cert,
      CATALOG_HTTP_TLS_KEY: files.key,
    };
    const gateway = await fleet.gateway('gateway-tls-2w', origin, env);
    const base = baseDir === undefined ? undefined : await fleet.gateway('base', origin, env, [], baseDir);
    // What s_time's `GET /` gets (a problem: no such resource), for the bare server to send too.
    const answer = await captureResponse(`${gateway.url}/`, undefined, trusting);
    const answerFile = join(fleet.logDir, 'tls-answer.json');
    writeFileSync(answerFile, JSON.stringify(answer));
    const bare = await fleet.script('bare-https-server', 'bare-server.ts', [answerFile, files.cert, files.key], GATEWAY_NODE_FLAGS);
    const bareWorkers = await fleet.script('bare-https-workers', 'bare-https-workers.ts', [answerFile, files.cert, files.key], GATEWAY_NODE_FLAGS);
    nginx = await startNginx(join(fleet.logDir, 'nginx-tls'), origin.url, 2, { files, dispatcher: trusting });
    const at = (server: { readonly url: string; readonly pid: number }): { readonly host: string; readonly pid: number } => ({
      host: new URL(server.url).host,
      pid: server.pid,
    });
    const servers: Readonly<Partial<Record<Server, { readonly host: string; readonly pid: number }>>> = {
      gateway: at(gateway),
      bare: at(bare),
      'bare-workers': at(bareWorkers),
      nginx: at(nginx),
      ...(base === undefined ? {} : { base: at(base) }),
    };
    for (const server of Object.values(servers)) pin(server.pid, ALL_CORES);
    const SCENARIOS = scenariosOf(base === undefined ? ['gateway', 'bare', 'bare-workers', 'nginx'] : ['gateway', 'base', 'bare', 'bare-workers', 'nginx']);
    const runs = new Map<string, TlsRun[]>(SCENARIOS.map((s) => [s.id, []]));
    for (let round = 1; round <= options.rounds; round++) {
      const order = SCENARIOS.map((_, i) => SCENARIOS[(i + round) % SCENARIOS.length] ?? SCENARIOS[0]);
      for (const s of order) {
        const server = s === undefined ? undefined : servers[s.server];
        if (s === undefined || server === undefined) continue;
        const { host, pid } = server;
        const result = await measure(s, host, files.cert, pid, options.duration, options.clients, round);
        runs.get(s.id)?.push(result);
        log(
          `round ${round}/${options.rounds} ${s.id}: ${Math.round(result.perSecond)} connections/s, server ${result.serverCpuUs.toFixed(0)} µs and s_time ${result.clientCpuUs.toFixed(0)} µs each${s.handshake === 'reuse' ? `, ${result.resumed} of ${result.connections} resumed` : ''}`,
        );
      }
    }
    const scenarios = SCENARIOS.map((s): TlsScenarioResult => {
      const own = runs.get(s.id) ?? [];
      return {
        ...s,
        runs: own,
        perSecond: spread(own.map((r) => r.perSecond)),
        serverCpuUs: spread(own.map((r) => r.serverCpuUs)),
        clientCpuUs: spread(own.map((r) => r.clientCpuUs)),
      };
    });
    const byVersion = (server: Server): Record<Version, Ratios> => ({
      'TLSv1.2': ratios(scenarios, server, 'TLSv1.2'),
      'TLSv1.3': ratios(scenarios, server, 'TLSv1.3'),
    });
    return {
      tool: 'catalog-gateway bench',
      mode: 'tls',
      startedAt,
      command,
      machine: machineInfo(),
      settings: {
        duration: options.duration,
        rounds: options.rounds,
        workers: 2,
        workerAccept: options.workerAccept,
        certificate: options.tlsKey === 'rsa2048' ? 'self-signed RSA 2048' : 'self-signed ECDSA P-256',
        clients: options.clients,
        ...(baseDir === undefined ? {} : { base: baseDir }),
      },
      scenarios,
      resumedOverNew: {
        gateway: byVersion('gateway'),
        bare: byVersion('bare'),
        'bare-workers': byVersion('bare-workers'),
        nginx: byVersion('nginx'),
        ...(base === undefined ? {} : { base: byVersion('base') }),
      },
      ...(base === undefined
        ? {}
        : {
            cpuOverBase: {
              'TLSv1.2': { new: cpuOverBase(scenarios, 'TLSv1.2', 'new'), reuse: cpuOverBase(scenarios, 'TLSv1.2', 'reuse') },
              'TLSv1.3': { new: cpuOverBase(scenarios, 'TLSv1.3', 'new'), reuse: cpuOverBase(scenarios, 'TLSv1.3', 'reuse') },
            },
          }),
    };
  } finally {
    await nginx?.stop();
    await trusting.close();
    await fleet.close();
  }
}

const SERVER_LABELS: Readonly<Record<Server, string>> = {
  gateway: 'gateway, 2 workers',
  base: "--ab checkout's gateway, 2 workers",
  bare: 'bare node:https',
  'bare-workers': 'bare node:https, 2 processes',
  nginx: 'nginx, 2 workers',
};

export function tlsMarkdown(report: TlsReport): string {
  const range = (s: Spread, f: (n: number) => string): string => `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
  const whole = (n: number): string => Math.round(n).toLocaleString('en-US');
  const times = (n: number): string => `${n.toFixed(2)}×`;
  const rows = report.scenarios.map((s) => {
    const resumed = s.handshake === 'reuse' ? `${s.runs.reduce((n, r) => n + r.resumed, 0)} of ${s.runs.reduce((n, r) => n + r.connections, 0)}` : '—';
    return `| ${SERVER_LABELS[s.server]} | ${s.version} | ${s.handshake === 'new' ? 'new (full handshake)' : 'resumed (session ticket)'} | ${range(s.perSecond, whole)} | ${s.serverCpuUs.median.toFixed(0)} | ${s.clientCpuUs.median.toFixed(0)} | ${resumed} |`;
  });
  const ratioRows = (['gateway', 'base', 'bare', 'bare-workers', 'nginx'] as const).flatMap((server) =>
    VERSIONS.flatMap((version) => {
      const r = report.resumedOverNew[server]?.[version];
      if (r === undefined) return [];
      return [`| ${SERVER_LABELS[server]} | ${version} | ${range(r.measured, times)} | ${range(r.clientAlone, times)} | ${range(r.serverAlone, times)} |`];
    }),
  );
  const { settings, cpuOverBase: overBase } = report;
  const baseRows =
    overBase === undefined
      ? []
      : [
          '',
          `This gateway's server CPU a connection over the gateway of ${settings.base ?? 'the --ab checkout'}, same round, median (min–max):`,
          '',
          '| TLS | new | resumed |',
          '|---|---:|---:|',
          ...VERSIONS.map((version) => `| ${version} | ${range(overBase[version].new, times)} | ${range(overBase[version].reuse, times)} |`),
        ];
  return `${[
    '| server | TLS | connection | connections/s median (min–max) | server CPU µs/connection | s_time CPU µs/connection | resumed |',
    '|---|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    'Resumed over new, same round, median (min–max):',
    '',
    '| server | TLS | connections/s | s_time CPU alone | server CPU alone |',
    '|---|---|---:|---:|---:|',
    ...ratioRows,
    ...baseRows,
    '',
    `openssl s_time, ${settings.clients === 1 ? 'one connection at a time' : `${settings.clients} s_time at once, each one connection at a time`}, \`GET /\` on each; gateway of ${settings.workers} workers (\`gateway.workerAccept: ${settings.workerAccept}\`), the bare servers (one process, and two on one SO_REUSEPORT port sharing their ticket key) and nginx (2 workers) on every core; ${settings.rounds} rounds × ${settings.duration} s, order rotated each round; ${settings.certificate}.`,
    `Machine: ${machineLine(report.machine)}. Command: \`${report.command}\`.`,
  ].join('\n')}\n`;
}
