import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../support/config.ts';
import { NODE } from '../support/cli-process.ts';
import { runGateway } from '../support/gateway-process.ts';
import { get } from '../support/harness.ts';

async function holdPort(t: { after(fn: () => void): void }): Promise<number> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

/** Processes still running with `marker` in their environment: the gateway's own, and its workers. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

async function gatewayWithWorkers(
  ports: { api: number; admin: number },
  more: readonly string[] = [],
): Promise<{ code: number | null; stderr: string; left: number[] }> {
  const dataDir = tempDir();
  const args = [
    'bin/catalog-gateway.js',
    'gateway',
    '--workers',
    '2',
    '--origin',
    'http://127.0.0.1:1',
    '--port',
    String(ports.api),
    '--admin-port',
    String(ports.admin),
    ...more,
  ];
  const child = spawn(NODE, args, { env: { ...process.env, CATALOG_DATA_DIR: dataDir, CATALOG_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const left = processesWith(`CATALOG_DATA_DIR=${dataDir}`);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return { code, stderr, left };
}

const refusals = (stderr: string): string[] => stderr.split('\n').filter((l) => l.includes('cannot listen'));

test('with workers, an API port in use stops the whole gateway: one line naming the listener and port, exit 1, no worker left', async (t) => {
  const api = await holdPort(t);
  const { code, stderr, left } = await gatewayWithWorkers({ api, admin: 0 });
  assert.equal(code, 1, stderr);
  assert.deepEqual(refusals(stderr), [
    `catalog-gateway gateway: cannot listen on 127.0.0.1:${api} for the gateway's API listener (--port): the address is already in use (choose another with the port flags or CATALOG_*_PORT)`,
  ]);
  assert.deepEqual(left, [], 'no worker left behind');
});

test('with workers, an admin port in use stops the whole gateway before any worker serves', async (t) => {
  const admin = await holdPort(t);
  const { code, stderr, left } = await gatewayWithWorkers({ api: 0, admin });
  assert.equal(code, 1, stderr);
  assert.deepEqual(refusals(stderr), [
    `catalog-gateway gateway: cannot listen on 127.0.0.1:${admin} for the gateway's admin listener (--admin-port): the address is already in use (choose another with the port flags or CATALOG_*_PORT)`,
  ]);
  assert.deepEqual(left, [], 'no worker left behind');
});

/** The inodes of the sockets listening on TCP `port` (IPv4), from /proc/net/tcp: `sl local_address rem_address st … inode`, state 0A is LISTEN. */
function listeningSockets(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'latin1')
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hexPort}`) === true && cols[3] === '0A')
    .map((cols) => cols[9] ?? '');
}

/** Those of `pids` whose open files include the socket `inode`. */
function holders(inode: string, pids: readonly number[]): number[] {
  return pids.filter((pid) => readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`));
}

/** The pids holding the one socket listening on TCP `port`. */
function holdersOfListeningSocket(port: number, pids: readonly number[]): number[] {
  const [inode, ...more] = listeningSockets(port);
  assert.ok(inode !== undefined, `nothing listens on port ${port}`);
  assert.deepEqual(more, [], 'one listening socket');
  return holders(inode, pids);
}

for (const accept of ['workers', 'primary'] as const) {
  test(`with gateway.workerAccept ${accept}, ${accept === 'workers' ? 'every worker holds the listening socket and accepts from it' : 'only the primary holds the listening socket and hands connections out'}`, async (t) => {
    const dataDir = tempDir();
    const file = join(dataDir, 'accept.json');
    writeFileSync(file, JSON.stringify({ gateway: { workerAccept: accept } }));
    const { gw, url } = await runGateway(t, dataDir, ['--workers', '2', '--config', file]);
    const workers = (): number[] => gw.seen.filter((l) => l.includes('"msg":"worker listening"')).map((l) => (JSON.parse(l) as { pid: number }).pid);
    // A worker's lines reach stdout up to 200 ms after it listens (log-sink.ts).
    await gw.line(() => workers().length === 2);
    const primary = gw.child.pid ?? 0;
    const holders = holdersOfListeningSocket(Number(new URL(url).port), [primary, ...workers()]);
    assert.deepEqual(holders, accept === 'workers' ? [primary, ...workers()] : [primary]);
    assert.equal((await get(`${url}/v1/books?q=accept`)).status, 401, 'a worker answers a connection it took: no token, 401');
  });
}

test('with gateway.workerAccept reuseport, each worker listens on a socket of its own while the primary holds the port, through a rolling restart too', async (t) => {
  const dataDir = tempDir();
  const file = join(dataDir, 'accept.json');
  writeFileSync(file, JSON.stringify({ gateway: { workerAccept: 'reuseport' } }));
  const { gw, url } = await runGateway(t, dataDir, ['--workers', '2', '--config', file]);
  const workers = (): number[] => gw.seen.filter((l) => l.includes('"msg":"worker listening"')).map((l) => (JSON.parse(l) as { pid: number }).pid);
  await gw.line(() => workers().length === 2);
  const primary = gw.child.pid ?? 0;
  const port = Number(new URL(url).port);
  /** Who holds each socket listening on the port, in the order of `pids`. */
  const owners = (pids: readonly number[]): number[][] =>
    listeningSockets(port)
      .map((inode) => holders(inode, [primary, ...pids]))
      .sort((a, b) => pids.indexOf(a[0] ?? 0) - pids.indexOf(b[0] ?? 0));
  assert.deepEqual(owners(workers()), [[workers()[0]], [workers()[1]]], 'a socket per worker, none the primary');
  assert.equal((await get(`${url}/v1/books?q=accept`)).status, 401, 'a worker answers a connection it took: no token, 401');

  // The primary's socket keeps the port from anyone else, another gateway of this mode included.
  const other = createServer();
  other.listen(port, '127.0.0.1');
  const [err] = (await once(other, 'error')) as [NodeJS.ErrnoException];
  assert.equal(err.code, 'EADDRINUSE');
  const second = await gatewayWithWorkers({ api: port, admin: 0 }, ['--config', file]);
  assert.equal(second.code, 1, second.stderr);
  assert.deepEqual(refusals(second.stderr), [
    `catalog-gateway gateway: cannot listen on 127.0.0.1:${port} for the gateway's API listener (--port): the address is already in use (choose another with the port flags or CATALOG_*_PORT)`,
  ]);
  assert.deepEqual(second.left, [], 'no worker left behind');

  // The new workers ask the primary where to listen and are seen listening: the restart goes through.
  gw.child.kill('SIGUSR2');
  await gw.line((l) => l.includes('"msg":"rolling restart done"'));
  await gw.line(() => workers().length === 4);
  const replaced = workers().slice(2);
  assert.deepEqual(owners(replaced), [[replaced[0]], [replaced[1]]], 'the new workers hold the sockets');
  assert.equal((await get(`${url}/v1/books?q=accept`)).status, 401);
});
