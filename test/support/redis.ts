/**
 * Real Redis servers for tests: Debian's `redis-server` (installed by system-deps.sh), on
 * loopback ports of their own, with no persistence, in a temporary directory; one server, or a
 * three-node Redis Cluster made with `redis-cli --cluster create`. Stopped by the caller.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL: a crash, not a shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Runs a redis-cli command against it. */
  cli(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

function launch(port: number, dir: string, extra: readonly string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru', '--loglevel', 'warning', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => {
      reject(new Error(`redis-server on port ${port} exited with ${String(code)}: ${output}`));
    });
    const poll = async (): Promise<void> => {
      for (let i = 0; i < 200; i++) {
        try {
          const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
          if (stdout.trim() === 'PONG') {
            child.removeAllListeners('exit');
            resolve(child);
            return;
          }
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} did not answer: ${output}`));
    };
    void poll();
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
}

async function server(port: number, dir: string, extra: readonly string[] = []): Promise<RedisServer> {
  let child: ChildProcess | undefined = await launch(port, dir, extra);
  const kill = async (): Promise<void> => {
    if (child === undefined) return;
    const dying = child;
    child = undefined;
    dying.kill('SIGKILL');
    await exited(dying);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill();
      child = await launch(port, dir, extra);
    },
    async cli(...args) {
      const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
      return stdout.trim();
    },
    stop: kill,
  };
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-'));
  const redis = await server(await freePort(), dir);
  return {
    ...redis,
    async stop() {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  readonly nodes: readonly RedisServer[];
  /** `redis+cluster://` with every node as a seed. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Three masters, no replicas, every slot assigned, state ok. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-redis-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const nodes = await Promise.all(ports.map((port) => server(port, dir, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'])));
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
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
