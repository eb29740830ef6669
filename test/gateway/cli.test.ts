import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { tempDir } from '../support/config.ts';
import { get, metricValue, until } from '../support/harness.ts';
import { NODE, run } from '../support/cli-process.ts';
import { startScriptedOrigin } from '../support/scripted-origin.ts';

const listening = (line: string): boolean => line.includes('"msg":"listening"');

test('`gateway` logs its URLs once listening and exits 0 on SIGTERM', async (t) => {
  const { child, line } = run(['gateway', '--origin', 'http://127.0.0.1:1', '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: tempDir() });
  t.after(() => child.kill('SIGKILL'));
  const { url, adminUrl } = JSON.parse(await line(listening)) as { url: string; adminUrl: string };
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await get(`${adminUrl}/healthz`)).status, 200);
  assert.equal((await get(`${url}/v1/books?q=x`)).status, 401);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
});

test('`start` runs origin and gateway and prints a curl that returns books through the gateway', async (t) => {
  const env = {
    CATALOG_DATA_DIR: tempDir(),
    CATALOG_ORIGIN_BOOKS: '2000',
    CATALOG_GATEWAY_PORT: '0',
    CATALOG_GATEWAY_ADMIN_PORT: '0',
    CATALOG_ORIGIN_PORT: '0',
    CATALOG_ORIGIN_ADMIN_PORT: '0',
    CATALOG_LOG_LEVEL: 'warn',
  };
  const { child, line } = run(['start'], env);
  t.after(() => child.kill('SIGKILL'));
  const curl = await line((l) => l.startsWith('curl '));
  const parsed = /^curl -i -H 'Authorization: Bearer ([A-Za-z0-9._-]+)' '(http:\/\/127\.0\.0\.1:(\d+)\/v1\/books\?q=[a-z]+)'$/.exec(curl);
  assert.ok(parsed, curl);
  const [, token = '', url = '', port = ''] = parsed;
  assert.notEqual(port, '0');
  const gatewayLine = await line((l) => l.trimStart().startsWith('gateway '));
  assert.ok(gatewayLine.includes(`127.0.0.1:${port}`), 'the banner shows the real port');
  const first = await get(url, { authorization: `Bearer ${token}` });
  assert.equal(first.status, 200);
  assert.ok((JSON.parse(first.body) as { results: unknown[] }).results.length > 0);
  assert.match(String(first.headers['cache-status']), /fwd=miss; stored/);
  const second = await get(url, { authorization: `Bearer ${token}` });
  assert.match(String(second.headers['cache-status']), /^catalog-gateway; hit; ttl=\d+$/);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);

  // The second `npm start` of the README: the same search, answered from the disk tier.
  const again = run(['start'], env);
  t.after(() => again.child.kill('SIGKILL'));
  const [, , againUrl = ''] =
    /^curl -i -H 'Authorization: Bearer ([A-Za-z0-9._-]+)' '(http:\/\/\S+)'$/.exec(await again.line((l) => l.startsWith('curl '))) ?? [];
  assert.equal(new URL(againUrl).search, new URL(url).search, 'the banner suggests the same search');
  const warm = await get(againUrl, { authorization: `Bearer ${token}` });
  assert.equal(warm.body, first.body);
  assert.match(String(warm.headers['cache-status']), /^catalog-gateway; hit; ttl=\d+; detail=disk$/);
});

test('`start --tls` makes a local certificate and prints a curl over HTTPS and HTTP/2 that trusts it', async (t) => {
  const dataDir = tempDir();
  const env = {
    CATALOG_DATA_DIR: dataDir,
    CATALOG_ORIGIN_BOOKS: '2000',
    CATALOG_GATEWAY_PORT: '0',
    CATALOG_GATEWAY_ADMIN_PORT: '0',
    CATALOG_ORIGIN_PORT: '0',
    CATALOG_ORIGIN_ADMIN_PORT: '0',
    CATALOG_LOG_LEVEL: 'warn',
  };
  const { child, line } = run(['start', '--tls'], env);
  t.after(() => child.kill('SIGKILL'));
  const curl = await line((l) => l.startsWith('curl '));
  const parsed = /^curl --http2 --cacert (\S+) -i -H 'Authorization: Bearer ([A-Za-z0-9._-]+)' '(https:\/\/127\.0\.0\.1:\d+\/v1\/books\?q=[a-z]+)'$/.exec(curl);
  assert.ok(parsed, curl);
  const [, cacert = '', token = '', url = ''] = parsed;
  assert.equal(cacert, join(dataDir, 'tls', 'cert.pem'));
  const https = new Agent({ allowH2: true, connect: { ca: readFileSync(cacert), preferH2: true } });
  t.after(() => https.close());
  const reply = await get(url, { authorization: `Bearer ${token}` }, 'GET', undefined, https);
  assert.equal(reply.status, 200);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
});

test('`fleet` runs Redis, the origin and two workers sharing one cache: a query asked of each worker reaches the origin once', async (t) => {
  const env = {
    CATALOG_DATA_DIR: tempDir(),
    CATALOG_ORIGIN_BOOKS: '2000',
    CATALOG_ORIGIN_PORT: '0',
    CATALOG_ORIGIN_ADMIN_PORT: '0',
    CATALOG_LOG_LEVEL: 'warn',
  };
  const { child, line } = run(['fleet', '--workers', '2', '--port', '0', '--admin-port', '0'], env);
  // SIGTERM even when the test fails: a SIGKILLed fleet would leave its redis-server behind.
  t.after(() => child.kill('SIGTERM'));
  const curl = await line((l) => l.startsWith('curl '));
  const parsed = /'Authorization: Bearer ([A-Za-z0-9._-]+)' '(http:\/\/127\.0\.0\.1:\d+\/v1\/books\?q=[a-z]+)'$/.exec(curl);
  assert.ok(parsed, curl);
  const [, token = '', url = ''] = parsed;
  const redisLine = await line((l) => l.trimStart().startsWith('redis '));
  const ownData = /data +(\S+) \(its own/.exec(await line((l) => l.trimStart().startsWith('data ')))?.[1] ?? '';
  assert.ok(existsSync(join(ownData, 'gateway-events.json')), 'the fleet registers in a directory of its own');
  const adminUrl = /admin (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(await line((l) => l.trimStart().startsWith('gateway ')))?.[1] ?? '';
  // Fresh connections, so the primary hands them to both workers in turn.
  const statuses = [];
  for (let i = 0; i < 4; i++) {
    const reply = await request(url, { headers: { authorization: `Bearer ${token}` }, reset: true });
    await reply.body.dump();
    statuses.push(String(reply.headers['cache-status']));
  }
  assert.equal(statuses.filter((s) => s.includes('fwd=miss')).length, 1, statuses.join('\n'));
  // The workers of one host find it in the host's disk tier before they ask Redis.
  assert.ok(
    statuses.some((s) => /detail=(disk|shared)/.test(s)),
    "the other worker took it from the host's disk tier or from Redis",
  );
  const metrics = (await get(`${adminUrl}/metrics`)).body;
  assert.equal(metricValue(metrics, 'catalog_gateway_workers'), 2);
  assert.equal(metricValue(metrics, 'catalog_gateway_fleet_fills_total', { role: 'leader' }), 1);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
  const redisPort = /127\.0\.0\.1:(\d+)/.exec(redisLine)?.[1] ?? '';
  assert.equal(spawnSync('redis-cli', ['-p', redisPort, 'ping'], { encoding: 'utf8' }).stdout.trim(), '', 'Redis stopped with the fleet');
  // The shared data directory lent its signing secret and nothing else; the fleet's own is gone.
  assert.deepEqual(readdirSync(env.CATALOG_DATA_DIR), ['signing-secret']);
  assert.equal(existsSync(ownData), false);
});

test('config/examples/http-cache.jsonc runs the gateway as a plain HTTP cache in front of any origin', async (t) => {
  const origin = await startScriptedOrigin((req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
    res.end(`hello from ${req.target}`);
  });
  t.after(() => origin.close());
  const args = ['gateway', '--config', 'config/examples/http-cache.jsonc', '--origin', origin.url, '--host', '127.0.0.1', '--port', '0', '--admin-port', '0'];
  const { child, line } = run(args, { CATALOG_DATA_DIR: tempDir() });
  t.after(() => child.kill('SIGKILL'));
  const { url } = JSON.parse(await line(listening)) as { url: string };
  const first = await get(`${url}/any/path?free=form`);
  const second = await get(`${url}/any/path?free=form`);
  assert.equal(first.status, 200, 'no token is asked for');
  assert.equal(second.body, 'hello from /any/path?free=form');
  assert.match(String(second.headers['cache-status']), /; hit;/);
  assert.equal(origin.count('/any/path?free=form'), 1);
});

test('--version prints the package version; an older Node runs it on the project Node', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; engines?: unknown };
  const version = spawnSync(NODE, ['bin/catalog-gateway.js', '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0);
  assert.equal(version.stdout, `catalog-gateway ${pkg.version} (Node.js ${process.version})\n`);
  // npm runs on the system's Node and would warn EBADENGINE on every install; the bin checks instead.
  assert.equal(pkg.engines, undefined);
  // The machine's own Node, outside node_modules/.bin (Node 20 here): the bin's launcher hands
  // the command to the project's Node 24 (without one, test/shared/second-day.test.ts).
  const old = spawnSync('/usr/bin/node', ['bin/catalog-gateway.js', '--version'], { encoding: 'utf8' });
  assert.equal(old.status, 0, old.stderr);
  assert.equal(old.stdout, version.stdout);
});

test('access lines name the service and the client; SIGUSR1 and SIGHUP reopen a rotated log file instead of killing the process', async (t) => {
  const dir = tempDir();
  const logFile = join(dir, 'gateway.log');
  const { child } = run(['gateway', '--origin', 'http://127.0.0.1:1', '--port', '0', '--admin-port', '0'], {
    CATALOG_DATA_DIR: dir,
    CATALOG_LOG_DESTINATION: logFile,
    CATALOG_LOG_LEVEL: 'info',
  });
  t.after(() => child.kill('SIGKILL'));
  // With a file destination nothing reaches stdout: the file says when it is listening.
  let listening: { url: string } | undefined;
  await until(async () => {
    const found = existsSync(logFile)
      ? readFileSync(logFile, 'utf8')
          .split('\n')
          .find((l) => l.includes('"msg":"listening"'))
      : undefined;
    listening = found === undefined ? undefined : (JSON.parse(found) as { url: string });
    if (listening === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    return listening !== undefined;
  }, 10_000);
  const url = listening?.url ?? '';
  const access = async (file: string, path: string): Promise<Record<string, unknown>> => {
    let found: string | undefined;
    await until(async () => {
      found = existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .find((l) => l.includes(`"path":"${path}"`))
        : undefined;
      if (found === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      return found !== undefined;
    }, 10_000);
    return JSON.parse(found ?? '{}') as Record<string, unknown>;
  };
  await get(`${url}/v1/books?q=first`, { 'user-agent': 'cli-test/1.0' });
  const first = await access(logFile, '/v1/books?q=first');
  assert.equal(first.service, 'catalog-gateway');
  assert.equal(first.remote, '127.0.0.1');
  assert.equal(first.ua, 'cli-test/1.0');
  assert.equal(first.proto, 'HTTP/1.1');
  for (const signal of ['SIGUSR1', 'SIGHUP'] as const) {
    renameSync(logFile, `${logFile}.${signal}`);
    child.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await get(`${url}/v1/books?q=after-${signal}`);
    assert.equal((await access(logFile, `/v1/books?q=after-${signal}`)).status, 401, `a new file after ${signal}`);
  }
  assert.equal(child.exitCode, null, 'still running');
});
