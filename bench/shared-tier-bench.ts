/**
 * `npm run bench -- --shared-tier`: three gateway processes sharing one Redis in front of the real
 * origin (issue 10's figures). A hit taken from Redis is paired with the local hit that follows it
 * on the same gateway and key; a URL purge on one gateway is timed until the two others stop
 * serving the entry; and rounds of 200 concurrent requests for a cold query, spread over the three,
 * count the origin calls each round caused. Next to the hits, the same run times what no gateway
 * can undercut: a bare GET of a stored entry, from this process through ioredis (interleaved with
 * the pairs) and from Redis's own C client (redis-benchmark, one connection).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Agent, request, type Dispatcher } from 'undici';
import { startRedisProcess, type RedisProcess } from '../src/cli/redis-server.ts';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { QuerySpace } from './query-space.ts';
import { machineLine } from './table.ts';
import { originRequests } from './throughput.ts';

const PAIRS = 2000;
const PURGES = 100;
const ROUNDS = 100;
const CONCURRENT = 200;

export interface Latencies {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface SharedTierReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'shared-tier';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly gateways: number;
  /** Client-measured latency of a hit served from Redis, and of the local hit after it, same key and gateway. */
  readonly sharedHit: Latencies;
  readonly localHit: Latencies;
  readonly pairs: number;
  /** A bare GET of a stored entry: through ioredis from the bench process, between the pairs. */
  readonly redisGet: Latencies;
  /** The same from redis-benchmark (C, one connection, back to back), undefined when it failed. */
  readonly redisBenchmarkGet: Latencies | undefined;
  readonly entryBytes: number;
  /** From the purge request's start until both other gateways stop serving the entry. */
  readonly purgeSeenByAll: Latencies;
  readonly purges: number;
  /** Origin calls per round of concurrent requests for one cold query. */
  readonly originCallsPerRound: readonly number[];
  readonly roundsWithOneCall: number;
}

function latencies(samples: readonly number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? Number.NaN };
}

const run = promisify(execFile);

/**
 * redis-benchmark's figures for `requests` GETs of `bytes`-long values, from its CSV
 * (`p50_latency_ms`…); undefined when it failed, or found no Redis (it retries until its timeout).
 */
export async function redisBenchmarkGet(port: number, bytes: number, requests = 20_000): Promise<Latencies | undefined> {
  try {
    const { stdout } = await run('redis-benchmark', ['-p', String(port), '-c', '1', '-n', String(requests), '-t', 'get', '-d', String(bytes), '--csv'], {
      timeout: 120_000,
    });
    const [header, row] = stdout
      .trim()
      .split('\n')
      .map((line) => line.split(',').map((cell) => cell.replace(/"/g, '')));
    const field = (name: string): number => Number(row?.[header?.indexOf(name) ?? -1]);
    const figures = { p50Ms: field('p50_latency_ms'), p99Ms: field('p99_latency_ms'), maxMs: field('max_latency_ms') };
    return Object.values(figures).every(Number.isFinite) ? figures : undefined;
  } catch {
    return undefined;
  }
}

async function timedGet(dispatcher: Dispatcher, url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; cacheStatus: string }> {
  const started = performance.now();
  const reply = await request(url, { dispatcher, headers });
  await reply.body.dump();
  return { ms: performance.now() - started, status: reply.statusCode, cacheStatus: String(reply.headers['cache-status']) };
}

export async function sharedTierBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<SharedTierReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  let redis: RedisProcess | undefined;
  const agent = new Agent({ connections: 64 });
  let direct: Redis | undefined;
  try {
    log('starting Redis, the origin and three gateways sharing it…');
    redis = await startRedisProcess({ dir: join(fleet.logDir, 'redis') });
    const origin = await fleet.origin();
    const env = { CATALOG_GATEWAY_REDIS_URL: redis.url, CATALOG_GATEWAY_ACCESS_LOG: 'false' };
    const gateways: ServerProcess[] = [];
    for (const name of ['gateway-a', 'gateway-b', 'gateway-c']) gateways.push(await fleet.gateway(name, origin, env));
    const [a, b, c] = gateways;
    if (a === undefined || b === undefined || c === undefined) throw new Error('three gateways');
    const space = new QuerySpace(readCatalogVocabulary(join(fleet.dataDir, 'catalog.db')));
    const secret = loadOrCreateSecret(join(fleet.dataDir, 'signing-secret'));
    const read = { authorization: `Bearer ${await mintToken(secret, { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 })}` };
    const admin = {
      authorization: `Bearer ${await mintToken(secret, { subject: 'bench', scope: 'catalog:admin', ttlSeconds: 86_400 })}`,
      'content-type': 'application/json',
    };

    log(`pairing ${PAIRS} hits from Redis with the local hits after them, and with bare GETs of an entry…`);
    direct = new Redis(redis.url, { enableAutoPipelining: true });
    const shared: number[] = [];
    const local: number[] = [];
    const bare: number[] = [];
    let entryKey: string | undefined;
    for (let i = 0; i < PAIRS; i++) {
      const target = space.take();
      await timedGet(agent, `${a.url}${target}`, read);
      const fromRedis = await timedGet(agent, `${b.url}${target}`, read);
      const fromL1 = await timedGet(agent, `${b.url}${target}`, read);
      if (!fromRedis.cacheStatus.includes('detail=shared') || !/; hit; ttl=\d+$/.test(fromL1.cacheStatus))
        throw new Error(`not an L2 then L1 hit: ${fromRedis.cacheStatus} / ${fromL1.cacheStatus}`);
      shared.push(fromRedis.ms);
      local.push(fromL1.ms);
      entryKey ??= (await direct.scan('0', 'MATCH', '*entry:*', 'COUNT', 1000))[1][0];
      if (entryKey === undefined) throw new Error('no entry in Redis after a fill');
      const started = performance.now();
      await direct.getBuffer(entryKey);
      bare.push(performance.now() - started);
    }
    const entryBytes = entryKey === undefined ? 0 : await direct.strlen(entryKey);
    const cBench = await redisBenchmarkGet(redis.port, entryBytes);

    log(`timing ${PURGES} purges until the two other gateways see them…`);
    const seen: number[] = [];
    for (let i = 0; i < PURGES; i++) {
      const target = space.take();
      for (const gw of [a, b, c]) await timedGet(agent, `${gw.url}${target}`, read);
      const started = performance.now();
      const purge = await request(`${a.adminUrl ?? ''}/purge`, { dispatcher: agent, method: 'POST', headers: admin, body: JSON.stringify({ urls: [target] }) });
      await purge.body.dump();
      if (purge.statusCode !== 200) throw new Error(`purge answered ${purge.statusCode}`);
      const gone = async (gw: ServerProcess): Promise<void> => {
        for (;;) {
          const probe = await timedGet(agent, `${gw.url}${target}`, { ...read, 'cache-control': 'only-if-cached' });
          if (probe.status !== 200) return;
        }
      };
      await Promise.all([gone(b), gone(c)]);
      seen.push(performance.now() - started);
    }

    log(`${ROUNDS} rounds of ${CONCURRENT} concurrent requests for a cold query over three gateways…`);
    const calls: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const target = space.take();
      const before = await originRequests(origin);
      const replies = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => timedGet(agent, `${gateways[i % 3]?.url ?? ''}${target}`, read)));
      const failed = replies.filter((r) => r.status !== 200).length;
      if (failed > 0) throw new Error(`${failed} requests failed in round ${round}`);
      calls.push((await originRequests(origin)) - before);
    }
    return {
      tool: 'catalog-gateway bench',
      mode: 'shared-tier',
      startedAt,
      command,
      machine: machineInfo(),
      gateways: 3,
      sharedHit: latencies(shared),
      localHit: latencies(local),
      pairs: PAIRS,
      redisGet: latencies(bare),
      redisBenchmarkGet: cBench,
      entryBytes,
      purgeSeenByAll: latencies(seen),
      purges: PURGES,
      originCallsPerRound: calls,
      roundsWithOneCall: calls.filter((n) => n === 1).length,
    };
  } finally {
    direct?.disconnect();
    await agent.close();
    await fleet.close();
    await redis?.kill();
  }
}

export function sharedTierMarkdown(r: SharedTierReport): string {
  const ms = (l: Latencies): string => `p50 ${l.p50Ms.toFixed(2)} ms, p99 ${l.p99Ms.toFixed(2)} ms, max ${l.maxMs.toFixed(2)} ms`;
  return `${[
    '| measure | figure | target |',
    '|---|---|---|',
    `| hit from Redis (another gateway filled it) | ${ms(r.sharedHit)} | p99 ≤ local + 1 ms |`,
    `| local hit, same gateway and key, right after | ${ms(r.localHit)} | |`,
    `| Redis hit p99 − local hit p99 | ${(r.sharedHit.p99Ms - r.localHit.p99Ms).toFixed(2)} ms | ≤ 1 ms |`,
    `| a bare GET of one stored entry (${r.entryBytes} B), ioredis from the bench process, between the pairs | ${ms(r.redisGet)} | |`,
    `| the same, redis-benchmark (C client, one connection, 20,000 back to back) | ${r.redisBenchmarkGet === undefined ? 'n/a' : ms(r.redisBenchmarkGet)} | |`,
    `| URL purge on one gateway until the other two stop serving it | ${ms(r.purgeSeenByAll)} | p99 ≤ 100 ms |`,
    `| ${CONCURRENT} concurrent requests for a cold query over ${r.gateways} gateways: rounds with exactly one origin call | ${r.roundsWithOneCall} of ${r.originCallsPerRound.length} (most in a round: ${Math.max(...r.originCallsPerRound)}) | ≥ 99 of 100 |`,
    '',
    `${r.pairs} paired hits, ${r.purges} purges; latencies measured by the client (undici, loopback), servers unpinned. Machine: ${machineLine(r.machine)}. Command: \`${r.command}\`.`,
  ].join('\n')}\n`;
}
