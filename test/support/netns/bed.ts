/**
 * A fleet as hosts with a network between them (issues 28 and 31), made of Linux network
 * namespaces on this machine: three gateway hosts, Redis, the origin and a client, each in its own
 * namespace, and a switch namespace holding two bridges:
 *
 *   cache  198.18.1.0/24   Redis .2, gateway host i .(10+i)        what a partition cuts
 *   svc    198.18.2.0/24   origin .2, client .3, gateway host i .(10+i)   clients, fills, events
 *
 * Every member joins a bridge through a veth pair whose far end lives in the switch namespace, so
 * nothing is added to the machine's own namespace, and the addresses (the benchmarking range,
 * RFC 2544) exist only inside namespaces made here. Each server listens on its namespace's
 * loopback behind a delaying relay (relay-main.ts) on the outside address: every connection
 * between namespaces gets `delayMs` each way. `cut(i)` sets the switch end of host i's cache link
 * down, so its packets to and from Redis are dropped without a refusal or a reset, as in a real
 * partition, while it still takes requests and events.
 *
 * Namespaces are named `cgnet-<run>-<member>`; `stop()` kills what runs in them and deletes them,
 * and `removeLeftovers()` does the same for any run a killed process could not clean up.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, GATEWAY_NODE_FLAGS, cleanEnv, exited, startServerProcess, type ServerProcess } from '../../../src/loadtest/server-process.ts';

export const NETNS_PREFIX = 'cgnet-';
const RELAY = fileURLToPath(new URL('relay-main.ts', import.meta.url));
const CACHE_NET = '198.18.1';
const SVC_NET = '198.18.2';
const REDIS_PORT = 6379;
const ORIGIN_PORT = 8081;
const ORIGIN_ADMIN_PORT = 9091;
const GATEWAY_PORT = 8080;
const GATEWAY_ADMIN_PORT = 9090;
/** How long Redis or a relay may take to start. */
const READY_MS = 10_000;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Why namespaces cannot be made here, or undefined when they can (tried for real). */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'making network namespaces needs root';
  const probe = `${NETNS_PREFIX}probe-${process.pid}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return undefined;
  } catch (err) {
    return `\`ip netns add\` failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
  }
}

/** Kills what runs in the named namespaces (only processes a bed started run there) and deletes them. */
function removeNamespaces(names: readonly string[]): void {
  for (const ns of names) {
    for (const pid of ip('netns', 'pids', ns)
      .split('\n')
      .filter((p) => p !== '')) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    ip('netns', 'del', ns);
  }
}

/** The beds of runs that died before their own cleanup. */
export function removeLeftovers(): void {
  const names = ip('netns', 'list')
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '');
  removeNamespaces(names.filter((n) => n.startsWith(NETNS_PREFIX)));
}

export interface BedOptions {
  /** Catalog database the origin serves (read and written: loans). */
  readonly db: string;
  readonly secretFile: string;
  /** Where data directories and log files go. */
  readonly dir: string;
  readonly hosts?: number;
  /** Added each way on every connection between namespaces. Default 2. */
  readonly delayMs?: number;
  /** `CATALOG_*` settings of every gateway and of the origin. */
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  readonly originEnv?: Readonly<Record<string, string>>;
}

export interface BedHost {
  readonly ns: string;
  readonly url: string;
  readonly adminUrl: string;
  readonly logFile: string;
}

export interface HostBed {
  readonly hosts: readonly BedHost[];
  readonly originUrl: string;
  readonly originAdminUrl: string;
  readonly redisUrl: string;
  /** The namespace load and probes run in: it reaches every server, as clients of the fleet do. */
  readonly clientNs: string;
  /** The `ip` arguments that cut host `i` off from Redis, or heal it. */
  linkCommand(i: number, state: 'down' | 'up'): readonly string[];
  /** Runs `node SCRIPT ARGS` in the client namespace; resolves with its stdout once it exits 0. */
  runClient(script: string, args: readonly string[], stderr?: (line: string) => void): Promise<string>;
  stop(): Promise<void>;
}

interface Member {
  readonly ns: string;
  readonly peer: string;
}

/** A process in a namespace that ends when its standard input does (relays) or when killed. */
async function leashed(ns: string, command: readonly string[], ready: string): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', ns, ...command], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const { promise: isReady, resolve } = Promise.withResolvers<boolean>();
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    if (output.includes(ready)) resolve(true);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  if (!(await Promise.race([isReady, exited(child).then(() => false), sleep(READY_MS, false)]))) {
    child.kill('SIGKILL');
    throw new Error(`${command.join(' ')} in ${ns} did not start: ${output.trim()}`);
  }
  return child;
}

export async function startHostBed(options: BedOptions): Promise<HostBed> {
  const run = Math.random().toString(36).slice(2, 8);
  const name = (member: string): string => `${NETNS_PREFIX}${run}-${member}`;
  const sw = name('sw');
  const hostCount = options.hosts ?? 3;
  const delay = String(options.delayMs ?? 2);
  const made: string[] = [];
  const children: ChildProcess[] = [];
  const servers: ServerProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => Promise.race([s.stop(), sleep(3000)])));
    for (const child of children) child.kill('SIGKILL');
    removeNamespaces(made);
  };
  const addNamespace = (ns: string): void => {
    ip('netns', 'add', ns);
    made.push(ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  };
  /** `ns` joins bridge `net` with `address`, through a veth whose switch end is `peer`. */
  const attach = (ns: string, net: 'cache' | 'svc', peer: string, address: string): Member => {
    ip('-n', ns, 'link', 'add', net, 'type', 'veth', 'peer', 'name', peer, 'netns', sw);
    ip('-n', sw, 'link', 'set', peer, 'master', net, 'up');
    ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', net);
    ip('-n', ns, 'link', 'set', net, 'up');
    return { ns, peer };
  };
  const relay = async (ns: string, routes: readonly string[]): Promise<void> => {
    children.push(await leashed(ns, [process.execPath, RELAY, delay, ...routes], 'relaying'));
  };
  try {
    addNamespace(sw);
    for (const bridge of ['cache', 'svc']) {
      ip('-n', sw, 'link', 'add', bridge, 'type', 'bridge');
      ip('-n', sw, 'link', 'set', bridge, 'up');
    }
    const redisNs = name('redis');
    const originNs = name('origin');
    const clientNs = name('client');
    for (const ns of [redisNs, originNs, clientNs]) addNamespace(ns);
    attach(redisNs, 'cache', 'redis', `${CACHE_NET}.2`);
    attach(originNs, 'svc', 'origin', `${SVC_NET}.2`);
    attach(clientNs, 'svc', 'client', `${SVC_NET}.3`);
    const hostLinks: Member[] = [];
    for (let i = 1; i <= hostCount; i++) {
      const ns = name(`gw${i}`);
      addNamespace(ns);
      hostLinks.push(attach(ns, 'cache', `gw${i}-cache`, `${CACHE_NET}.${10 + i}`));
      attach(ns, 'svc', `gw${i}-svc`, `${SVC_NET}.${10 + i}`);
    }

    children.push(
      await leashed(
        redisNs,
        [
          'redis-server',
          '--port',
          String(REDIS_PORT),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--maxmemory',
          '64mb',
          '--maxmemory-policy',
          'volatile-lru',
        ],
        'Ready to accept connections',
      ),
    );
    await relay(redisNs, [`${CACHE_NET}.2:${REDIS_PORT}=${REDIS_PORT}`]);
    await relay(originNs, [`${SVC_NET}.2:${ORIGIN_PORT}=${ORIGIN_PORT}`, `${SVC_NET}.2:${ORIGIN_ADMIN_PORT}=${ORIGIN_ADMIN_PORT}`]);
    const shared = { CATALOG_AUTH_SECRET_FILE: options.secretFile, CATALOG_LOG_LEVEL: 'info' };
    mkdirSync(options.dir, { recursive: true });
    servers.push(
      await startServerProcess({
        name: 'origin',
        launcher: ['ip', 'netns', 'exec', originNs],
        args: [CLI, 'origin', '--port', String(ORIGIN_PORT), '--admin-port', String(ORIGIN_ADMIN_PORT)],
        env: cleanEnv({ ...shared, CATALOG_DATA_DIR: join(options.dir, 'origin'), CATALOG_ORIGIN_DB: options.db, ...options.originEnv }),
        logFile: join(options.dir, 'origin.log'),
        startTimeoutMs: 30_000,
      }),
    );
    const originUrl = `http://${SVC_NET}.2:${ORIGIN_PORT}`;
    const originAdminUrl = `http://${SVC_NET}.2:${ORIGIN_ADMIN_PORT}`;
    const redisUrl = `redis://${CACHE_NET}.2:${REDIS_PORT}`;
    const hosts = await Promise.all(
      hostLinks.map(async ({ ns }, index) => {
        const address = `${SVC_NET}.${11 + index}`;
        await relay(ns, [`${address}:${GATEWAY_PORT}=${GATEWAY_PORT}`, `${address}:${GATEWAY_ADMIN_PORT}=${GATEWAY_ADMIN_PORT}`]);
        const adminUrl = `http://${address}:${GATEWAY_ADMIN_PORT}`;
        const logFile = join(options.dir, `gateway-${index + 1}.log`);
        servers.push(
          await startServerProcess({
            name: `gateway ${index + 1}`,
            launcher: ['ip', 'netns', 'exec', ns],
            args: [
              CLI,
              'gateway',
              '--port',
              String(GATEWAY_PORT),
              '--admin-port',
              String(GATEWAY_ADMIN_PORT),
              '--origin',
              originUrl,
              '--origin-probe',
              `${originAdminUrl}/readyz`,
              '--redis',
              redisUrl,
            ],
            nodeFlags: GATEWAY_NODE_FLAGS,
            // Each host registers its own receiver, at the address the origin reaches it by.
            env: cleanEnv({
              ...shared,
              CATALOG_DATA_DIR: join(options.dir, `gateway-${index + 1}`),
              CATALOG_GATEWAY_EVENTS_REGISTER: 'true',
              CATALOG_GATEWAY_EVENTS_RECEIVER_URL: `${adminUrl}/events`,
              CATALOG_GATEWAY_ACCESS_LOG: 'false',
              ...options.gatewayEnv,
            }),
            logFile,
            startTimeoutMs: 30_000,
          }),
        );
        return { ns, url: `http://${address}:${GATEWAY_PORT}`, adminUrl, logFile };
      }),
    );
    return {
      hosts,
      originUrl,
      originAdminUrl,
      redisUrl,
      clientNs,
      linkCommand: (i, state) => ['-n', sw, 'link', 'set', hostLinks[i]?.peer ?? '', state],
      async runClient(script, args, stderr) {
        const child = spawn('ip', ['netns', 'exec', clientNs, process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        children.push(child);
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
        });
        let partial = '';
        let tail = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          tail = (tail + chunk).slice(-4000);
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) stderr?.(line);
        });
        const code = await exited(child);
        if (code !== 0) throw new Error(`${script} exited with ${code}: ${tail}`);
        return out;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
