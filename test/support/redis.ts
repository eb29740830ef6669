/**
 * Real Redis servers for tests (src/cli/redis-server.ts): one server, or a three-node Redis
 * Cluster made with `redis-cli --cluster create`, each in a temporary directory. Stopped by the
 * caller.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/cli/free-port.ts';
import { startRedisProcess, type RedisProcess } from '../../src/cli/redis-server.ts';

const run = promisify(execFile);
const TEST_MEMORY = '64mb';

export interface RedisServer extends RedisProcess {
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-'));
  const redis = await startRedisProcess({ dir, maxMemory: TEST_MEMORY });
  return {
    ...redis,
    async stop() {
      await redis.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  readonly nodes: readonly RedisProcess[];
  /** `redis+cluster://` with every node as a seed. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Three masters, no replicas, every slot assigned, state ok. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const nodes = await Promise.all(
    ports.map((port) =>
      startRedisProcess(
        {
          dir,
          maxMemory: TEST_MEMORY,
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'],
        },
        port,
      ),
    ),
  );
  await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
  for (let i = 0; i < 400; i++) {
    const states = await Promise.all(nodes.map((n) => n.cli('cluster', 'info')));
    if (states.every((s) => s.includes('cluster_state:ok'))) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    nodes,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisSentinel {
  readonly master: RedisProcess;
  readonly sentinel: RedisProcess;
  /** `redis+sentinel://` naming the one Sentinel and the master it watches. */
  readonly url: string;
  stop(): Promise<void>;
}

/** A master and one Sentinel watching it as `mymaster` (quorum 1). */
export async function startRedisSentinel(): Promise<RedisSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-sentinel-'));
  const master = await startRedisProcess({ dir, maxMemory: TEST_MEMORY });
  const configFile = join(dir, 'sentinel.conf');
  writeFileSync(configFile, `sentinel monitor mymaster 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds mymaster 2000\n`);
  const sentinel = await startRedisProcess({ dir, configFile, extraArgs: ['--sentinel'] });
  for (let i = 0; i < 400; i++) {
    if ((await sentinel.cli('sentinel', 'get-master-addr-by-name', 'mymaster')).includes(String(master.port))) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    master,
    sentinel,
    url: `redis+sentinel://127.0.0.1:${sentinel.port}/mymaster`,
    async stop() {
      await Promise.all([sentinel.kill(), master.kill()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
