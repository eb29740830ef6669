/**
 * The traps a newcomer met between `npm ci` and a gateway they trust, each through the real CLI
 * and servers: where the secret is, tools that shared `data/`, typos, port clashes, listen
 * failures, what `npm test` installs, and a catalog that is not reseeded.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { jwtVerify } from 'jose';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { NODE, run } from '../support/cli-process.ts';
import { tempDir } from '../support/config.ts';

const BIN = resolve('bin/catalog-gateway.js');
const NODE_BIN = resolve(NODE);

/**
 * The CLI run to its end, from `cwd`, with only PATH and `env` in its environment; killed after
 * 30 s, so a server that starts when it should have been refused fails its test instead of hanging.
 */
function cli(args: readonly string[], env: Record<string, string> = {}, cwd = process.cwd()): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(NODE_BIN, [BIN, ...args], { cwd, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 30_000 });
}

/** A gateway refused at start on a fresh data directory: exit 78, and `message` alone on stderr. */
function assertRefusedAtStart(env: Record<string, string>, message: string): void {
  const refused = cli(['gateway'], { CATALOG_DATA_DIR: tempDir(), ...env });
  assert.equal(refused.status, 78);
  assert.equal(refused.stderr, `catalog-gateway gateway: ${message}\n`);
}

const NEW_SECRET = /no signing secret at .* yet, so this creates one/;

test('`token` signs with the same secret from any directory, and says so before it makes a new one', async () => {
  const fromRoot = cli(['token']);
  const fromSrc = cli(['token'], {}, resolve('src'));
  const fromTmp = cli(['token'], {}, tmpdir());
  // The package's own data directory holds the secret whichever directory the command ran in.
  const secret = readFileSync(join(PROJECT_ROOT, 'data', 'signing-secret'), 'utf8').trim();
  for (const { stdout, stderr } of [fromSrc, fromTmp]) {
    assert.doesNotMatch(stderr, NEW_SECRET);
    await jwtVerify(stdout.trim(), Buffer.from(secret, 'base64url'));
  }
  assert.equal(fromRoot.status, 0);

  const elsewhere = tempDir();
  const first = cli(['token', '--data-dir', elsewhere]);
  assert.match(first.stderr, NEW_SECRET);
  assert.ok(first.stderr.includes(join(elsewhere, 'signing-secret')));
  assert.equal(cli(['token', '--data-dir', elsewhere]).stderr, '', 'the second run finds it and says nothing');
  assert.equal(cli(['token'], { CATALOG_DATA_DIR: elsewhere }).stderr, '', 'CATALOG_DATA_DIR names the same directory');
});

test('a load test beside a running `start` leaves its registration and catalog alone', async (t) => {
  const dataDir = tempDir();
  const env = { CATALOG_DATA_DIR: dataDir, CATALOG_ORIGIN_BOOKS: '2000', CATALOG_LOG_LEVEL: 'warn' };
  const { child, line } = run(['start', '--port', '0', '--admin-port', '0', '--origin-port', '0', '--origin-admin-port', '0'], env);
  t.after(() => child.kill('SIGKILL'));
  const originUrl = /origin {3}(http:\/\/\S+)/.exec(await line((l) => l.startsWith('  origin ')))?.[1] ?? '';
  await line((l) => l.startsWith('Mint another token'));
  const registration = readFileSync(join(dataDir, 'gateway-events.json'), 'utf8');

  // The same data directory in its environment, as a shell that ran `npm start` would have; its
  // servers log at info, which is how it sees them listen.
  const loadtest = spawn(NODE_BIN, ['src/loadtest/main.ts', '--circulation', '--duration', '1', '--connections', '2', '--distinct', '20', '--out', tempDir()], {
    env: { PATH: process.env.PATH, CATALOG_DATA_DIR: dataDir, CATALOG_ORIGIN_BOOKS: '2000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  loadtest.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(loadtest, 'exit')) as [number | null];
  assert.equal(code, 0, stderr);

  assert.equal(readFileSync(join(dataDir, 'gateway-events.json'), 'utf8'), registration, 'the gateway-events.json of `start` is untouched');
  const admin = await mintToken(loadOrCreateSecret(join(dataDir, 'signing-secret')), { subject: 'test', scope: 'catalog:admin', ttlSeconds: 60 });
  const res = await request(`${originUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${admin}` } });
  const { results } = (await res.body.json()) as { results: { id: string }[] };
  const saved = JSON.parse(registration) as { id: string };
  assert.deepEqual(
    results.map((r) => r.id),
    [saved.id],
    "the origin of `start` knows only its own gateway's registration",
  );
});

test('typos in variables and files are refused with the nearest name; JSON that does not parse says where', () => {
  const env = cli(['gateway'], { CATALOG_GATEWAY_CAHCE_MAX_BYTES: '1MiB' });
  assert.equal(env.status, 78);
  assert.equal(
    env.stderr,
    'catalog-gateway gateway: unknown environment variable CATALOG_GATEWAY_CAHCE_MAX_BYTES (did you mean CATALOG_GATEWAY_CACHE_MAX_BYTES?): every CATALOG_* variable names a config key (docs/configuration.md)\n',
  );

  const file = join(tempDir(), 'typo.jsonc');
  writeFileSync(file, '{ "gateway": { "cahce": { "maxBytes": "1MiB" } } }');
  const key = cli(['gateway', '--config', file]);
  assert.equal(key.status, 78);
  assert.equal(key.stderr, `catalog-gateway gateway: unknown config key gateway.cahce (from file ${file}) (did you mean gateway.cache?)\n`);

  const json = cli(['gateway'], { CATALOG_GATEWAY_ROUTES: '[{"prefix":"/","mode":"catalog",}]' });
  assert.equal(json.status, 78);
  assert.match(json.stderr, /config key gateway\.routes = .* \(from env CATALOG_GATEWAY_ROUTES\) is not valid JSON: .* at position 32 \(line 1 column 33\)\n$/);
});

test('a header timeout longer than the request timeout is refused naming both keys, on either server, not with a stack trace', () => {
  for (const command of ['gateway', 'origin']) {
    const refused = cli([command, '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: tempDir(), CATALOG_HTTP_REQUEST_TIMEOUT_MS: '1.5s' });
    assert.equal(refused.status, 78, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr,
      `catalog-gateway ${command}: config key http.headersTimeoutMs = 10s (from config/default.jsonc) is longer than http.requestTimeoutMs = 1500ms (from env CATALOG_HTTP_REQUEST_TIMEOUT_MS): the header section is part of the request, so it may take at most as long\n`,
    );
  }
});

test('a refused URL is shown without its password', () => {
  assertRefusedAtStart(
    { CATALOG_GATEWAY_REDIS_URL: 'redis://cache:hunter2@redis.internal:99999' },
    'config key gateway.redis.url = "redis://cache:***@redis.internal:99999" (from env CATALOG_GATEWAY_REDIS_URL): expected null, or a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL (port 99999 is out of range)',
  );
  assertRefusedAtStart(
    { CATALOG_GATEWAY_ORIGIN: 'ftp://mirror:p@ss/word@files.internal' },
    'config key gateway.origin = "ftp://mirror:***@files.internal" (from env CATALOG_GATEWAY_ORIGIN): expected an http:// or https:// URL',
  );
});

test('a Redis password with a bare % is refused with a message, not a stack trace', () => {
  assertRefusedAtStart(
    { CATALOG_GATEWAY_REDIS_URL: 'redis://:100%sure@redis.internal' },
    'config key gateway.redis.url = "redis://:***@redis.internal" (from env CATALOG_GATEWAY_REDIS_URL): expected null, or a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL (the password has a % not followed by two hex digits: write % itself as %25)',
  );
});

test('an event secret the webhook library cannot verify with is refused at start, without showing it', () => {
  assertRefusedAtStart(
    { CATALOG_GATEWAY_EVENTS_SECRET: 'whsec_hunter2!' },
    'config key gateway.events.secret (from env CATALOG_GATEWAY_EVENTS_SECRET, not shown): expected whsec_ followed by the base64 of the key, as POST /v1/webhooks answers it',
  );
});

test('an event receiver URL the origin would refuse is refused at start, naming the key and hiding a password', () => {
  for (const [value, shown] of [
    ['gateway.example/events', '"gateway.example/events"'],
    ['https://gw:s3cret@gateway.example/events', '"https://gw:***@gateway.example/events"'],
  ] as const) {
    assertRefusedAtStart(
      { CATALOG_GATEWAY_EVENTS_RECEIVER_URL: value },
      `config key gateway.events.receiverUrl = ${shown} (from env CATALOG_GATEWAY_EVENTS_RECEIVER_URL): expected an absolute https:// (or http://) URL without credentials, as the origin registers receivers`,
    );
  }
});

test('a key set, secret or certificate file that cannot be read or used is refused naming its key, without quoting the file', () => {
  const dir = tempDir();
  const notJwks = join(dir, 'jwks.json');
  writeFileSync(notJwks, 'client_secret=s3cr3t-value\n');
  const refusals: [string, Record<string, string>, string][] = [
    ['origin', { CATALOG_AUTH_JWKS: notJwks }, `config key auth.jwks: ${notJwks} is not a JSON Web Key Set`],
    ['gateway', { CATALOG_AUTH_JWKS: join(dir, 'missing.json') }, `config key auth.jwks: ${join(dir, 'missing.json')} cannot be read (ENOENT)`],
    ['gateway', { CATALOG_AUTH_SECRET_FILE: dir }, `config key auth.secretFile: ${dir} cannot be read (EISDIR)`],
    [
      'gateway',
      { CATALOG_HTTP_TLS_CERT: join(dir, 'cert.pem'), CATALOG_HTTP_TLS_KEY: join(dir, 'key.pem') },
      `config keys http.tls.*: ${join(dir, 'cert.pem')} cannot be read: ENOENT`,
    ],
  ];
  for (const [command, env, message] of refusals) {
    const refused = cli([command, '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: dir, CATALOG_ORIGIN_BOOKS: '10', ...env });
    assert.equal(refused.status, 78, refused.stderr);
    // The line before it, if any, says a signing secret was made for the data directory.
    assert.ok(refused.stderr.endsWith(`catalog-gateway ${command}: ${message}\n`), refused.stderr);
    assert.doesNotMatch(refused.stderr, /s3cr3t|\n\s+at /);
  }
});

test('the API and the admin listener on one port are refused before anything starts, naming both flags', () => {
  const clash = cli(['gateway', '--port', '18080', '--admin-port', '18080', '--origin', 'http://127.0.0.1:1'], { CATALOG_DATA_DIR: tempDir() });
  assert.equal(clash.status, 78);
  assert.equal(clash.stdout, '', 'no log line, `stopped` least of all');
  assert.equal(
    clash.stderr,
    'catalog-gateway gateway: config keys gateway.port (from flag --port) and gateway.adminPort (from flag --admin-port) are both 18080: the API and admin listeners need a port each\n',
  );

  const across = cli(['start', '--port', '18081', '--origin-port', '18081'], { CATALOG_DATA_DIR: tempDir() });
  assert.equal(across.status, 78);
  assert.equal(across.stdout, '', 'the origin did not start either');
  assert.equal(
    across.stderr,
    "catalog-gateway start: the gateway's API listener (--port) and the origin's API listener (--origin-port) are both configured on port 18081; give them a port each\n",
  );
});

test('a port taken by another process names the listener, with no `stopped` line before it', async (t) => {
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  t.after(() => taken.close());
  const { port } = taken.address() as { port: number };
  const dataDir = tempDir();
  const admin = cli(['gateway', '--port', '0', '--admin-port', String(port), '--origin', 'http://127.0.0.1:1'], { CATALOG_DATA_DIR: dataDir });
  assert.equal(admin.status, 1);
  assert.doesNotMatch(admin.stdout, /"msg":"stopped"/);
  assert.equal(
    admin.stderr.trim().split('\n').at(-1),
    `catalog-gateway gateway: cannot listen on 127.0.0.1:${port} for the gateway's admin listener (--admin-port): the address is already in use (choose another with the port flags or CATALOG_*_PORT)`,
  );
  const api = cli(['gateway', '--port', String(port), '--admin-port', '0', '--origin', 'http://127.0.0.1:1'], { CATALOG_DATA_DIR: dataDir });
  assert.equal(api.status, 1);
  assert.doesNotMatch(api.stdout, /"msg":"stopped"/);
  assert.match(api.stderr, /for the gateway's API listener \(--port\): the address is already in use/);
});

test('what `npm test` installs is said on stderr before apt-get runs', () => {
  const stubs = tempDir();
  const calls = join(stubs, 'calls');
  for (const name of ['apt-get', 'sudo']) {
    writeFileSync(join(stubs, name), `#!/bin/sh\necho "${name} $*" >> ${calls}\n${name === 'sudo' ? 'exec "$@"\n' : ''}`);
    chmodSync(join(stubs, name), 0o755);
  }
  const ran = spawnSync('bash', ['ops/need-debian-packages.sh', 'the tests', 'no-such-program-here=some-package', 'sh=dash'], {
    env: { PATH: `${stubs}:${process.env.PATH ?? ''}` },
    encoding: 'utf8',
  });
  assert.equal(ran.status, 0);
  assert.equal(ran.stderr, 'installing Debian packages for the tests: some-package\n');
  assert.match(readFileSync(calls, 'utf8'), /apt-get install -y -qq --no-install-recommends some-package\n$/);
  assert.match(readFileSync('test/support/system-deps.sh', 'utf8'), /need-debian-packages\.sh" "the tests"/);
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  assert.match(pkg.scripts.test ?? '', /^npm run system-deps && /);
});

test('an existing catalog is served as it is, and the origin says how to reseed it', async (t) => {
  const dataDir = tempDir();
  mkdirSync(dataDir, { recursive: true });
  assert.equal(cli(['seed', '--books', '300'], { CATALOG_DATA_DIR: dataDir }).status, 0);
  assert.ok(existsSync(join(dataDir, 'catalog.db')));
  const { child, line } = run(['origin', '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: dataDir, CATALOG_ORIGIN_BOOKS: '2000' });
  t.after(() => child.kill('SIGKILL'));
  const warning = await line((l) => l.includes('origin.books applies only when seeding'));
  assert.match(warning, /the catalog holds 300 books; .*catalog-gateway seed --books 2000/);
});
