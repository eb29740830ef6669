/**
 * The traps an operator met on the second day, past the first hour: reloading under `npm start`,
 * the CLI from outside the clone, the fleet beside `npm start`, a seed over a running origin,
 * each through the real CLI, npm and servers.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { freePort } from '../../src/cli/free-port.ts';
import { GATEWAY_NODE_FLAGS } from '../../src/loadtest/server-process.ts';
import { get, until } from '../support/harness.ts';
import { NODE, run } from '../support/cli-process.ts';
import { tempDir } from '../support/config.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('`npm start` names its pid and `reload`; SIGHUP to npm stops the server rather than orphan it', async (t) => {
  const dataDir = tempDir();
  const configFile = join(dataDir, 'gateway.jsonc');
  writeFileSync(configFile, '{}\n');
  const env = { PATH: process.env.PATH ?? '', CATALOG_DATA_DIR: dataDir, CATALOG_ORIGIN_BOOKS: '2000', CATALOG_LOG_LEVEL: 'info' };
  const npm = spawn(
    'npm',
    ['start', '--silent', '--', '--config', configFile, '--port', '0', '--admin-port', '0', '--origin-port', '0', '--origin-admin-port', '0'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let serverPid = 0;
  t.after(() => {
    npm.kill('SIGKILL');
    if (serverPid !== 0 && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  });
  const lines: string[] = [];
  createInterface({ input: npm.stdout }).on('line', (l) => lines.push(l));
  let stderr = '';
  npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await until(() => Promise.resolve(lines.some((l) => l.startsWith('Mint another token'))), 60_000);
  const reloadLine = lines.find((l) => l.startsWith("Reload the gateway's configuration")) ?? '';
  serverPid = Number(/SIGHUP to pid (\d+)\)\.$/.exec(reloadLine)?.[1]);
  assert.match(reloadLine, /^Reload the gateway's configuration with `npx catalog-gateway reload` \(SIGHUP to pid \d+\)\.$/);
  assert.equal(readFileSync(join(dataDir, 'gateway.pid'), 'utf8'), `${String(serverPid)}\n`);
  // The log's own writer may flush after the banner.
  const isListening = (l: string): boolean => l.includes('"msg":"listening"') && l.includes('"service":"catalog-gateway"');
  await until(() => Promise.resolve(lines.some(isListening)), 5000);
  const listening = JSON.parse(lines.find(isListening) ?? '{}') as { pid?: number };
  assert.equal(listening.pid, serverPid, 'the listening line names the pid too');

  // `reload` sends SIGHUP to that pid: a file that no longer parses is refused, saying where.
  writeFileSync(configFile, '{\n  "log": { "level": "debug" \n');
  const sent = spawnSync(NODE, ['bin/catalog-gateway.js', 'reload'], { env, encoding: 'utf8' });
  assert.equal(sent.status, 0, sent.stderr);
  assert.match(sent.stdout, new RegExp(`^sent SIGHUP to the gateway, pid ${String(serverPid)} `));
  await until(() => Promise.resolve(lines.some((l) => l.includes('configuration reload refused'))), 10_000);
  const refused = lines.find((l) => l.includes('configuration reload refused')) ?? '';
  assert.match(refused, /is not valid JSONC: CloseBraceExpected at line 3 column 1 \(offset 31\)/);

  // npm passes on only SIGINT and SIGTERM: a SIGHUP ends npm, and the server goes with it.
  npm.kill('SIGHUP');
  await until(() => Promise.resolve(!alive(serverPid)), 10_000);
  assert.equal(existsSync(join(dataDir, 'gateway.pid')), false, 'a clean stop removes the pid file');
  assert.match(
    stderr,
    /^catalog-gateway: the npm process that ran this server \(pid \d+\) has exited, so this server stops too; npm passes on only SIGINT and SIGTERM: reload with `npx catalog-gateway reload`, not a signal to npm$/m,
  );
  assert.doesNotMatch(stderr, /\n\s+at |trace-warnings/);
});

test('`reload` with no gateway running says so in one line and exits 1', () => {
  const dataDir = tempDir();
  const none = spawnSync(NODE, ['bin/catalog-gateway.js', 'reload', '--data-dir', dataDir], { encoding: 'utf8' });
  assert.equal(none.status, 1);
  assert.equal(
    none.stderr,
    `catalog-gateway reload: no gateway is running on this data directory (no pid in ${join(dataDir, 'gateway.pid')}); start one with \`npm start\` or \`catalog-gateway gateway\`, or name its --data-dir\n`,
  );
  writeFileSync(join(dataDir, 'gateway.pid'), '2147483646\n');
  const stale = spawnSync(NODE, ['bin/catalog-gateway.js', 'reload', '--data-dir', dataDir], { encoding: 'utf8' });
  assert.equal(stale.status, 1);
  assert.match(stale.stderr, /\(pid 2147483646\) is not running/);
});

const BIN = resolve('bin/catalog-gateway.js');
const SYSTEM_NODE = '/usr/bin/node';
const systemMajor = Number(spawnSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' }).stdout.replace(/^v/, '').split('.')[0]);
/** A PATH whose `node` is the machine's own (Node 20 here), as outside the clone. */
const SYSTEM_PATH = `${dirname(SYSTEM_NODE)}:${process.env.PATH ?? ''}`;

test('the bin works from outside the clone on the system Node, through its shebang and `npx --prefix`', () => {
  const dataDir = tempDir();
  const elsewhere = tempDir();
  const env = { PATH: SYSTEM_PATH, CATALOG_DATA_DIR: dataDir };
  const direct = spawnSync(BIN, ['token'], { cwd: elsewhere, env, encoding: 'utf8' });
  assert.equal(direct.status, 0, direct.stderr);
  assert.match(direct.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
  const npx = spawnSync('npx', ['--prefix', process.cwd(), 'catalog-gateway', 'token'], { cwd: elsewhere, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(npx.status, 0, npx.stderr);
  assert.match(npx.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
  const version = spawnSync(BIN, ['--version'], { cwd: elsewhere, env, encoding: 'utf8' });
  assert.match(version.stdout, /\(Node\.js v24\./, 'the project Node runs it');
});

test('an older Node with no project Node beside the bin prints the one documented line', () => {
  const copy = tempDir();
  mkdirSync(join(copy, 'bin'));
  copyFileSync(BIN, join(copy, 'bin', 'catalog-gateway.js'));
  writeFileSync(join(copy, 'package.json'), '{ "type": "module" }\n');
  const old = spawnSync(SYSTEM_NODE, [join(copy, 'bin', 'catalog-gateway.js'), '--version'], { encoding: 'utf8' });
  if (systemMajor < 24) {
    assert.equal(old.status, 1);
    assert.equal(
      old.stderr,
      `catalog-gateway needs Node.js 24 or later; this is v${spawnSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()}. Install Node.js 24, or run it through npm scripts after a full \`npm ci\`, which brings a Node 24 of its own.\n`,
    );
  } else {
    assert.equal(old.status, 0, 'a Node 24 or later runs it');
  }
});

for (const [which, path, stop] of [
  ['Node 24 (re-executed in place)', `${resolve('node_modules/.bin')}:${process.env.PATH ?? ''}`, 'SIGTERM'],
  ['the system Node (the project Node as its child)', SYSTEM_PATH, 'SIGTERM'],
  ['the system Node, stopped by Ctrl-C (SIGINT to the whole group)', SYSTEM_PATH, 'Ctrl-C'],
] as const) {
  test(`a server started through the bin's shebang on ${which} runs with the V8 flags and malloc's arena limit, and stops gracefully`, async (t) => {
    // A process group of its own, as a terminal's foreground job.
    const child = spawn(BIN, ['gateway', '--origin', 'http://127.0.0.1:1', '--port', '0', '--admin-port', '0'], {
      cwd: tempDir(),
      env: { PATH: path, CATALOG_DATA_DIR: tempDir() },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    t.after(() => {
      if (child.exitCode === null) process.kill(-(child.pid ?? 0), 'SIGKILL');
    });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    await until(() => Promise.resolve(lines.some((l) => l.includes('"msg":"listening"'))), 15_000);
    const { pid } = JSON.parse(lines.find((l) => l.includes('"msg":"listening"')) ?? '{}') as { pid: number };
    const argv = readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').split('\0');
    for (const flag of GATEWAY_NODE_FLAGS) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    // malloc's arena limit, which glibc reads from the environment only as a process starts.
    assert.ok(
      readFileSync(`/proc/${String(pid)}/environ`, 'utf8')
        .split('\0')
        .includes('MALLOC_ARENA_MAX=2'),
    );
    const exited = once(child, 'exit');
    if (stop === 'Ctrl-C') process.kill(-(child.pid ?? 0), 'SIGINT');
    else child.kill(stop);
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    await until(() => Promise.resolve(lines.some((l) => l.includes('"msg":"stopped"'))), 5000);
    assert.equal(alive(pid), false, 'the server went with its launcher');
  });
}

/** Holds `port` on loopback if it is free, so that a server left on its default would fail. */
async function holdIfFree(port: number): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((resolvePort) => {
    server.once('error', () => {
      resolvePort(undefined);
    });
    server.listen(port, '127.0.0.1', () => {
      resolvePort(server);
    });
  });
}

test('`fleet` beside `npm start`: its listeners take free ports unless named, its help says where its data goes; Ctrl-C stops it without a Redis warning', async (t) => {
  const defaults = [8080, 9090, 8081, 9091];
  const held = await Promise.all(defaults.map((port) => holdIfFree(port)));
  t.after(() => {
    for (const server of held) server?.close();
  });
  const originPort = await freePort();
  // A process group of its own, as a shell's foreground job: Ctrl-C signals the whole group.
  const child = spawn(NODE, ['bin/catalog-gateway.js', 'fleet', '--origin-port', String(originPort)], {
    env: { ...process.env, CATALOG_DATA_DIR: tempDir(), CATALOG_ORIGIN_BOOKS: '2000', CATALOG_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  t.after(() => {
    if (child.exitCode === null) process.kill(-(child.pid ?? 0), 'SIGTERM');
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await until(() => Promise.resolve(output.includes('Ctrl-C stops')), 60_000);
  const ports = [...output.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
  for (const port of defaults) assert.ok(!ports.includes(port), `the default port ${String(port)} is left to npm start:\n${output}`);
  assert.match(output, new RegExp(`origin +http://127\\.0\\.0\\.1:${String(originPort)} `), '--origin-port is honoured');
  const exited = once(child, 'exit');
  process.kill(-(child.pid ?? 0), 'SIGINT');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
  assert.doesNotMatch(output, /shared cache tier is unavailable/);

  const help = spawnSync(NODE, ['bin/catalog-gateway.js', 'fleet', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--origin-port PORT +origin API port \(default: a free one\)/);
  assert.match(help.stdout, /--data-dir DIR +catalog, Redis files and event registration \(default: a temporary directory of its own/);
  assert.doesNotMatch(help.stdout, /default: the package's data\/\)/);
});

test('`seed` refuses while an origin holds the catalog, and replaces it whole once none does', async (t) => {
  const dataDir = tempDir();
  const db = join(dataDir, 'catalog.db');
  const seed = (books: string): SpawnSyncReturns<string> =>
    spawnSync(NODE, ['bin/catalog-gateway.js', 'seed', '--books', books], { env: { ...process.env, CATALOG_DATA_DIR: dataDir }, encoding: 'utf8' });
  assert.equal(seed('300').status, 0);
  const origin = spawn(NODE, ['bin/catalog-gateway.js', 'origin', '--port', '0', '--admin-port', '0'], {
    env: { ...process.env, CATALOG_DATA_DIR: dataDir, CATALOG_ORIGIN_BOOKS: '300', CATALOG_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => origin.kill('SIGKILL'));
  const lines: string[] = [];
  createInterface({ input: origin.stdout }).on('line', (l) => lines.push(l));
  await until(() => Promise.resolve(lines.some((l) => l.includes('"msg":"listening"'))), 15_000);
  const inode = statSync(db).ino;

  const refused = seed('200');
  assert.equal(refused.status, 1, refused.stderr);
  assert.equal(
    refused.stderr,
    `catalog-gateway seed: ${db} is open in another process (a running origin, say): stop it first, or seed another file with --db and start the origin on that\n`,
  );
  assert.equal(statSync(db).ino, inode, 'the catalog the origin serves is left as it is');
  assert.deepEqual(
    readdirSync(dataDir).filter((f) => f.includes('building')),
    [],
    'nothing half-built left behind',
  );

  const exited = once(origin, 'exit');
  origin.kill('SIGTERM');
  await exited;
  const reseeded = seed('200');
  assert.equal(reseeded.status, 0, reseeded.stderr);
  assert.notEqual(statSync(db).ino, inode);
  assert.deepEqual(
    readdirSync(dataDir).filter((f) => f.startsWith('catalog.db')),
    ['catalog.db'],
    'no -wal or -shm of the old file beside the new one',
  );
});

const cli = (args: readonly string[], env: Record<string, string> = {}): SpawnSyncReturns<string> =>
  spawnSync(NODE, ['bin/catalog-gateway.js', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });

test('`token --ttl` takes a unit as config values do', () => {
  const dataDir = tempDir();
  for (const [ttl, seconds] of [
    ['1s', 1],
    ['90', 90],
    ['30m', 1800],
    ['7d', 604_800],
  ] as const) {
    const minted = cli(['token', '--ttl', ttl, '--data-dir', dataDir]);
    assert.equal(minted.status, 0, minted.stderr);
    const claims = JSON.parse(Buffer.from(minted.stdout.split('.')[1] ?? '', 'base64url').toString()) as { iat: number; exp: number };
    assert.equal(claims.exp - claims.iat, seconds, ttl);
  }
  const refused = cli(['token', '--ttl', '1.5s', '--data-dir', dataDir]);
  assert.equal(refused.status, 2);
  assert.match(
    refused.stderr,
    /^catalog-gateway token: --ttl must be a whole number of seconds from 1 to 999999999, or the same with a unit \(`90s`, `5m`, `1h`, `1d`\), got "1\.5s"\n/,
  );
});

test('a variable that lacks a word of a key (CATALOG_PORT) is refused with every name it could mean', () => {
  const refused = cli(['token'], { CATALOG_PORT: '8080' });
  assert.equal(refused.status, 78);
  assert.equal(
    refused.stderr,
    'catalog-gateway token: unknown environment variable CATALOG_PORT (did you mean CATALOG_ORIGIN_PORT or CATALOG_GATEWAY_PORT?): every CATALOG_* variable names a config key (docs/configuration.md)\n',
  );
});

test("a token minted with another data directory's secret is refused saying so, by key ids that show no secret", async (t) => {
  const served = tempDir();
  const other = tempDir();
  const { child, line } = run(['gateway', '--origin', 'http://127.0.0.1:1', '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: served });
  t.after(() => child.kill('SIGKILL'));
  const { url } = JSON.parse(await line((l) => l.includes('"msg":"listening"'))) as { url: string };
  const foreign = cli(['token', '--data-dir', other]).stdout.trim();
  const reply = await get(`${url}/v1/books?q=x`, { authorization: `Bearer ${foreign}` });
  assert.equal(reply.status, 401);
  const { detail } = JSON.parse(reply.body) as { detail: string };
  const keyId = (dir: string): string =>
    createHash('sha256')
      .update(Buffer.from(readFileSync(join(dir, 'signing-secret'), 'utf8').trim(), 'base64url'))
      .digest('base64url')
      .slice(0, 8);
  assert.equal(
    detail,
    `the token was signed with another signing secret (key id ${keyId(other)}) than this server's (key id ${keyId(served)}): mint it with the data directory or auth.secretFile the server uses`,
  );
  assert.ok(String(reply.headers['www-authenticate']).includes(`error_description="${detail}"`));
  const own = cli(['token', '--data-dir', served]).stdout.trim();
  assert.notEqual((await get(`${url}/v1/books?q=x`, { authorization: `Bearer ${own}` })).status, 401);
});

test('Ctrl-C on `npm run fleet` drains it whole, though npm passes the SIGINT on to a fleet the terminal signalled already', async (t) => {
  const npm = spawn('npm', ['run', 'fleet', '--silent'], {
    env: { PATH: process.env.PATH ?? '', CATALOG_DATA_DIR: tempDir(), CATALOG_ORIGIN_BOOKS: '2000', CATALOG_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  t.after(() => {
    if (npm.exitCode === null) process.kill(-(npm.pid ?? 0), 'SIGKILL');
  });
  let output = '';
  npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await until(() => Promise.resolve(output.includes('Ctrl-C stops')), 60_000);
  const exited = once(npm, 'exit');
  process.kill(-(npm.pid ?? 0), 'SIGINT');
  const [code, signal] = (await exited) as [number | null, string | null];
  assert.deepEqual([code, signal], [0, null], output.slice(-2000));
  assert.match(
    output,
    /"workers":2,"pid":\d+,"msg":"listening"[\s\S]*"service":"catalog-gateway","msg":"stopped"/,
    'the primary drained its workers and said so',
  );
});
