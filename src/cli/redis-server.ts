/**
 * A local `redis-server` (Debian's package) as a child process, for `catalog-gateway fleet` and
 * the tests: loopback only, no persistence, bounded by `maxmemory` with `volatile-lru` (entries
 * and locks carry expiries and go first; the purge stream has none and is never evicted). It
 * dies with the process that started it, and only then: a Ctrl-C meant for that process is not its.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { exited } from '../loadtest/server-process.ts';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL: a crash, not a shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Runs a redis-cli command against it and returns what it printed. */
  cli(...args: string[]): Promise<string>;
}

export interface RedisProcessOptions {
  /** Working directory (cluster node files), made if missing. */
  readonly dir: string;
  readonly maxMemory?: string;
  readonly extraArgs?: readonly string[];
  /** A configuration file, read first (a Sentinel's, which it also rewrites). */
  readonly configFile?: string;
}

/** Whether a Redis answers PING on `port` (loopback). */
export async function answersPing(port: number): Promise<boolean> {
  try {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
    return stdout.trim() === 'PONG';
  } catch {
    return false;
  }
}

/**
 * Runs the server on a leash: a shell starts it and waits for the end of its standard input, a
 * pipe from this process, and then kills it with SIGKILL. The pipe ends when this process closes
 * it (kill) or dies in any way, SIGKILL included, so no redis-server outlives the process that
 * started it. The shell exits with the server's status.
 */
const LEASHED = [
  'exec 3<&0',
  '"$@" 3<&- &',
  'server=$!',
  '(read -r _ <&3; kill -9 "$server" 2>/dev/null) &',
  'watcher=$!',
  'wait "$server"',
  'status=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

function launch(port: number, options: RedisProcessOptions): Promise<ChildProcess> {
  const args = [
    ...(options.configFile === undefined ? [] : [options.configFile]),
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    options.dir,
  ];
  args.push('--maxmemory', options.maxMemory ?? '256mb', '--maxmemory-policy', 'volatile-lru', '--loglevel', 'warning', ...(options.extraArgs ?? []));
  // A process group of its own: Ctrl-C at a terminal signals the whole foreground group, and a
  // Redis that died with it would be gone while the workers drain (each logging that the shared
  // tier is unavailable). The leash still ends it with this process; `kill` ends it after them.
  const child = spawn('sh', ['-c', LEASHED, 'redis-server', 'redis-server', ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve, reject) => {
    const failed = (why: string): void => {
      reject(new Error(`redis-server on port ${port} ${why}: ${output.trim()}`));
    };
    child.once('error', (err) => {
      failed(`could not start (${err.message})`);
    });
    child.once('exit', (code) => {
      // The shell's status for a command it could not find.
      failed(code === 127 ? "could not start (is Debian's redis-server installed?)" : `exited with ${String(code)}`);
    });
    void (async () => {
      for (let i = 0; i < 400; i++) {
        if (child.exitCode !== null) return;
        if (await answersPing(port)) {
          child.removeAllListeners('exit');
          resolve(child);
          return;
        }
        await sleep(25);
      }
      child.stdin.end();
      failed('did not answer PING');
    })();
  });
}

export async function startRedisProcess(options: RedisProcessOptions, port?: number): Promise<RedisProcess> {
  mkdirSync(options.dir, { recursive: true });
  const chosen = port ?? (await freePort());
  let child: ChildProcess | undefined = await launch(chosen, options);
  const kill = async (): Promise<void> => {
    if (child === undefined) return;
    const dying = child;
    child = undefined;
    dying.stdin?.end();
    await exited(dying);
  };
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    kill,
    async restart() {
      await kill();
      child = await launch(chosen, options);
    },
    async cli(...args) {
      const { stdout } = await run('redis-cli', ['-p', String(chosen), ...args]);
      return stdout.trim();
    },
  };
}
