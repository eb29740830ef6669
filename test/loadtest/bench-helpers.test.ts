import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseBenchArgs } from '../../bench/args.ts';
import { GcTrace, parseGcLine } from '../../bench/gc-trace.ts';
import { p99FromLog } from '../../bench/h2load.ts';
import { askedTwice } from '../../bench/memory-bench.ts';
import { QuerySpace } from '../../bench/query-space.ts';
import { redisBenchmarkGet } from '../../bench/shared-tier-bench.ts';
import { spread } from '../../bench/stats.ts';
import { cpuOverBase, runSTime, type STimeRun, type TlsScenarioResult } from '../../bench/tls-bench.ts';
import { makeSelfSignedCertificate } from '../../src/cli/local-certificate.ts';
import { UsageError } from '../../src/cli/args.ts';
import type { CatalogVocabulary } from '../../src/loadtest/catalog-vocabulary.ts';
import { parseRequestTarget } from '../../src/shared/request-target.ts';
import { startRedis } from '../support/redis.ts';

const VOCABULARY: CatalogVocabulary = {
  titles: ['The Silent River', 'Hidden Garden of Kyoto', "The Lighthouse Keeper's Daughter"],
  authors: ['Amara Okafor', 'Jonas Lindqvist'],
  branches: ['branch_central', 'branch_harbor'],
};

test('the bench query space never repeats a target, and every target is canonical and valid', () => {
  const space = new QuerySpace(VOCABULARY);
  const targets = Array.from({ length: space.size }, () => space.take());
  assert.equal(new Set(targets).size, targets.length);
  for (const target of targets) {
    const verdict = parseRequestTarget('GET', target, 2048);
    assert.ok(verdict.ok && verdict.canonical === target, target);
  }
  assert.throws(() => space.take(), /holds \d+ distinct targets/);
  assert.deepEqual(
    Array.from({ length: 5 }, (_, i) => new QuerySpace(VOCABULARY).at(i)),
    targets.slice(0, 5),
    'the same seed, the same order',
  );
});

test('spread gives median, min and max', () => {
  assert.deepEqual(spread([3, 1, 2]), { median: 2, min: 1, max: 3 });
  assert.deepEqual(spread([4, 1, 2, 3]), { median: 2.5, min: 1, max: 4 });
  assert.ok(Number.isNaN(spread([]).median));
});

test('bench flags: defaults, a subset of scenarios with the ceiling always in, and refusals naming the flag', () => {
  const defaults = parseBenchArgs([]);
  assert.ok(defaults !== 'help');
  assert.equal(defaults.duration, 5);
  assert.equal(defaults.connections, 64);
  assert.equal(defaults.rounds, 5);
  assert.equal(defaults.scenarios, undefined);
  const subset = parseBenchArgs(['--scenarios', 'gateway-hot,origin']);
  assert.ok(subset !== 'help');
  assert.deepEqual(subset.scenarios, ['bare-hot', 'bare-zipf', 'gateway-hot', 'origin']);
  assert.throws(
    () => parseBenchArgs(['--rounds', '0']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--rounds'),
  );
  assert.throws(
    () => parseBenchArgs(['--scenarios', 'gateway-warm']),
    (e: unknown) => e instanceof UsageError && e.message.includes('"gateway-warm"'),
  );
  assert.equal(parseBenchArgs(['--help']), 'help');
  const ladder = parseBenchArgs(['--ladder', '--rounds', '7']);
  assert.ok(ladder !== 'help' && ladder.ladder && ladder.rounds === 7 && !defaults.ladder);
  assert.equal(defaults.workerAccept, 'reuseport', '--tls runs a socket per worker unless told');
  const shared = parseBenchArgs(['--tls', '--worker-accept', 'workers']);
  assert.ok(shared !== 'help' && shared.workerAccept === 'workers');
  assert.throws(
    () => parseBenchArgs(['--tls', '--worker-accept', 'kernel']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--worker-accept') && e.message.includes('reuseport'),
  );
  assert.ok(!defaults.instructions && defaults.warm === 20_000 && defaults.countedRequests === 4000);
  const counted = parseBenchArgs(['--instructions', '--warm', '500', '--requests', '2000']);
  assert.ok(counted !== 'help' && counted.instructions && counted.warm === 500 && counted.countedRequests === 2000);
  assert.throws(
    () => parseBenchArgs(['--instructions', '--requests', '10']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--requests'),
  );
});

test('bench flags: --traces picks synthetic traces by name and refuses an unknown one', () => {
  const defaults = parseBenchArgs(['--hit-ratio']);
  assert.ok(defaults !== 'help');
  assert.equal(defaults.traceNames, undefined);
  const some = parseBenchArgs(['--hit-ratio', '--traces', 'recency, shift,recency']);
  assert.ok(some !== 'help');
  assert.deepEqual(some.traceNames, ['recency', 'shift']);
  assert.throws(
    () => parseBenchArgs(['--traces', 'zipf-0.8']),
    (e: unknown) => e instanceof UsageError && e.message.includes('"zipf-0.8"') && e.message.includes('crawler-30%'),
  );
});

test("the shared-tier bench reads redis-benchmark's GET latencies from a real Redis", async () => {
  const redis = await startRedis();
  try {
    const figures = await redisBenchmarkGet(redis.port, 3000, 500);
    assert.ok(figures !== undefined, 'redis-benchmark ran and its CSV had the latency columns');
    assert.ok(figures.p50Ms > 0 && figures.p50Ms <= figures.p99Ms && figures.p99Ms <= figures.maxMs, JSON.stringify(figures));
  } finally {
    await redis.stop();
  }
});

test("the bench counts collections from V8's own --trace-gc lines, read on from where it stopped", () => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-trace-'));
  try {
    const file = join(dir, 'stdout.log');
    const run = (script: string): void => {
      const fd = openSync(file, 'a');
      try {
        execFileSync(process.execPath, ['--trace-gc', '--expose-gc', '-e', script], { stdio: ['ignore', fd, 'inherit'] });
      } finally {
        closeSync(fd);
      }
    };
    const trace = new GcTrace(file);
    run('let held = []; for (let i = 0; i < 3e6; i++) { held.push({ i }); if (held.length > 1e4) held = []; } console.log("scavenged");');
    const young = trace.read();
    assert.ok(young.count > 0, 'scavenges counted');
    assert.ok(young.totalMs > 0);
    run('globalThis.gc(); globalThis.gc(); console.log("collected");');
    const after = trace.read();
    assert.ok(after.full >= young.full + 2, `two full collections counted, once (${young.full} → ${after.full})`);
    assert.ok(after.count >= young.count + 2);
    assert.deepEqual(trace.read(), after, 'nothing new, nothing counted again');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a --trace-gc line gives its pause and, for a full collection, the incremental marking before it', () => {
  assert.deepEqual(
    parseGcLine(
      '[22722:0x334da000]    21916 ms: Scavenge 32.3 (46.3) -> 25.9 (46.3) MB, pooled: 0 MB, 0.42 / 0.00 ms  (average mu = 0.998, current mu = 0.999) task; ',
    ),
    { full: false, ms: 0.42 },
  );
  assert.deepEqual(
    parseGcLine(
      '[22722:0x334da000]    15405 ms: Mark-Compact (reduce) 34.1 (48.6) -> 22.9 (46.3) MB, pooled: 0 MB, 7.5 / 0.01 ms  (+ 1.25 ms in 32 steps since start of marking, biggest step 0.1 ms, walltime since start of marking 33 ms) (average mu = 0.998, current mu = 0.999) finalize incremental marking via task; GC in old space requested',
    ),
    { full: true, ms: 8.75 },
  );
  assert.equal(parseGcLine('{"level":"info","msg":"listening"}'), undefined);
});

test("the HTTP/2 bench reads p99 from h2load's per-request log, leaving failed streams out", () => {
  // start (µs since the epoch), status (-1: the stream failed), µs until the answer ended.
  const rows = Array.from({ length: 200 }, (_, i) => `1795910000000000\t200\t${(i + 1) * 100}`);
  rows.push('1795910000000000\t-1\t999999999');
  assert.equal(p99FromLog(`${rows.join('\n')}\n`), 19.8);
  assert.ok(Number.isNaN(p99FromLog('')));
});

test("the TLS bench counts resumed connections from openssl s_time's own marks and reads its CPU time, against a real TLS server", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-bench-'));
  const files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  makeSelfSignedCertificate(files, 'tls bench test', 1);
  const server = createHttpsServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) }, (_req, res) => {
    res.end('ok');
  });
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const sTime = (mode: string): Promise<STimeRun> =>
      runSTime(['-connect', `127.0.0.1:${port}`, mode, '-tls1_3', '-CAfile', files.cert, '-www', '/', '-time', '1']);
    const fresh = await sTime('-new');
    assert.ok(fresh.connections > 0);
    assert.equal(fresh.resumed, 0);
    // Its own CPU, read by bash: a second of handshakes costs the client a good part of a second.
    assert.ok(fresh.cpuSeconds > 0.05 && fresh.cpuSeconds < 5, `s_time's CPU ${fresh.cpuSeconds} s`);
    const reused = await sTime('-reuse');
    assert.ok(reused.connections > 0);
    assert.equal(reused.resumed, reused.connections, "every connection resumes the first one's session");
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the TLS bench's --ab ratio pairs this gateway's CPU a connection with the other checkout's of the same round", () => {
  const scenario = (server: 'gateway' | 'base', cpu: readonly (readonly [number, number])[]): TlsScenarioResult => {
    const runs = cpu.map(([round, serverCpuUs]) => ({ round, connections: 100, perSecond: 100, resumed: 100, serverCpuUs, clientCpuUs: 200 }));
    return {
      id: `${server}-TLSv1.2-reuse`,
      server,
      version: 'TLSv1.2',
      handshake: 'reuse',
      runs,
      perSecond: spread(runs.map((r) => r.perSecond)),
      serverCpuUs: spread(cpu.map(([, us]) => us)),
      clientCpuUs: spread(runs.map((r) => r.clientCpuUs)),
    };
  };
  // Round 3 of the gateway has no base run beside it: left out, not paired with another round's.
  const ratio = cpuOverBase(
    [
      scenario('gateway', [
        [1, 270],
        [2, 330],
        [3, 100],
      ]),
      scenario('base', [
        [2, 300],
        [1, 300],
      ]),
    ],
    'TLSv1.2',
    'reuse',
  );
  assert.deepEqual(ratio, { median: 1, min: 0.9, max: 1.1 });
  assert.ok(Number.isNaN(cpuOverBase([], 'TLSv1.3', 'new').median));
});

test('bench flags: the memory mode takes a client, a page size and the disk tier off, and refuses an unknown client', () => {
  const defaults = parseBenchArgs(['--memory']);
  assert.ok(defaults !== 'help');
  assert.deepEqual([defaults.client, defaults.books, defaults.diskMib], ['gzip', 3, 4096]);
  const identity = parseBenchArgs(['--memory', '--client', 'identity', '--books', '6', '--disk-mib', '0']);
  assert.ok(identity !== 'help');
  assert.deepEqual([identity.client, identity.books, identity.diskMib], ['identity', 6, 0]);
  assert.throws(
    () => parseBenchArgs(['--memory', '--client', 'br']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--client') && e.message.includes('identity'),
  );
  assert.throws(
    () => parseBenchArgs(['--tiers', '--disk-mib', '0']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--disk-mib'),
  );
});

test("bench flags: the TLS mode's certificate key is P-256 unless RSA 2048 is asked for, and nothing else", () => {
  const defaults = parseBenchArgs(['--tls']);
  const rsa = parseBenchArgs(['--tls', '--tls-key', 'rsa2048']);
  assert.ok(defaults !== 'help' && rsa !== 'help');
  assert.deepEqual([defaults.tlsKey, rsa.tlsKey], ['p256', 'rsa2048']);
  assert.throws(
    () => parseBenchArgs(['--tls', '--tls-key', 'ed25519']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--tls-key') && e.message.includes('rsa2048'),
  );
});

test("the memory bench's identity client asks each target twice, the second ask a block after the first, and every target twice in all", () => {
  const order = askedTwice(10, 4);
  const sent = Array.from({ length: 20 }, (_, i) => order(i));
  assert.deepEqual(sent, [0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 8, 9]);
  const asked = new Map<number, number>();
  for (const target of sent) asked.set(target, (asked.get(target) ?? 0) + 1);
  assert.ok([...asked.values()].every((n) => n === 2) && asked.size === 10);
});

test('bench flags: the TLS mode runs one s_time by default and --clients more at once', () => {
  const one = parseBenchArgs(['--tls']);
  const four = parseBenchArgs(['--tls', '--clients', '4']);
  assert.ok(one !== 'help' && four !== 'help');
  assert.deepEqual([one.clients, four.clients], [1, 4]);
  assert.throws(
    () => parseBenchArgs(['--tls', '--clients', '0']),
    (e: unknown) => e instanceof UsageError && e.message.includes('--clients'),
  );
});
