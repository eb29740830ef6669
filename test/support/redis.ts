/**
 * Real Redis servers for tests (src/cli/redis-server.ts): one server, or a three-node Redis
 * Cluster made with `redis-cli --cluster create`, each in a temporary directory. Stopped by the
 * caller.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

/** A Redis Cluster node also listens on its port + 10000 (the cluster bus): both must be free. */
const CLUSTER_BUS_OFFSET = 10000;

async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + CLUSTER_BUS_OFFSET > 65535) continue;
    if (await portFree(port + CLUSTER_BUS_OFFSET)) return port;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => {
      resolve(false);
    });
    probe.listen(port, '127.0.0.1', () => {
      probe.close(() => {
        resolve(true);
      });
    });
  });
}

/** Attempts at starting a cluster: a port probed free can be taken before its node binds it. */
const CLUSTER_ATTEMPTS = 3;

/** Three masters, no replicas, every slot assigned, state ok. */
export async function startRedisCluster(): Promise<RedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await clusterOnce();
    } catch (error) {
      if (attempt === CLUSTER_ATTEMPTS) throw error;
    }
  }
}

async function clusterOnce(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-cluster-'));
  const ports = [await freeClusterPort(), await freeClusterPort(), await freeClusterPort()];
  const started = await Promise.allSettled(
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
  const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (let i = 0; i < 400; i++) {
      const states = await Promise.all(nodes.map((n) => n.cli('cluster', 'info')));
      if (states.every((s) => s.includes('cluster_state:ok'))) break;
      await new Promise((r) => setTimeout(r, 25));
    }
  } catch (error) {
    // Nodes left running would keep the test process alive after the suite.
    await stop();
    throw error;
  }
  return { nodes, url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, stop };
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
