/**
 * The README's samples are what the programs print: the banner of `start`, and the curl session
 * run again, command by command, against a fresh `start` on the default catalog. Only what must
 * differ between runs is set aside: ports, tokens, `date`, `age`, `ttl` and the request id's digits.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { NODE, run } from './support/cli-process.ts';
import { tempDir } from './support/config.ts';
import { send } from './support/harness.ts';
import { startOriginFixture } from './support/origin-fixture.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const SHORT_TOKEN = 'eyJhbGciOiJIUzI1NiIs…';

/** The fenced block that follows the `<!-- sample:NAME …-->` marker. */
function sample(name: string): string {
  const marker = readme.indexOf(`<!-- sample:${name}`);
  assert.ok(marker >= 0, `README lacks the sample marker ${name}`);
  const open = readme.indexOf('```\n', marker) + 4;
  return readme.slice(open, readme.indexOf('\n```', open));
}

/** The four listeners' URLs as the banner prints them: gateway, its admin, origin, its admin. */
function bannerPorts(banner: string): string[] {
  const ports = [...banner.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => m[1] ?? '');
  return [...new Set(ports)];
}

function swapPorts(text: string, from: readonly string[], to: readonly string[]): string {
  return text.replace(/127\.0\.0\.1:(\d+)/g, (all, port: string) => {
    const i = from.indexOf(port);
    return i < 0 ? all : `127.0.0.1:${to[i] ?? port}`;
  });
}

function settled(output: string): string {
  return output
    .replace(/^(date): .*$/gim, '$1: …')
    .replace(/^age: \d+$/gm, 'age: N')
    .replace(/ttl=\d+/g, 'ttl=N')
    .replace(/^(x-request-id): (.*)$/gim, (_, name: string, id: string) => `${name}: ${id.replace(/[0-9a-f]/g, 'x')}`)
    .trimEnd();
}

test("the README shows the banner `start` prints and a curl session that prints the same today, after the banner's curl", async (t) => {
  const dataDir = tempDir();
  const { child, line, seen } = run(['start', '--port', '0', '--admin-port', '0', '--origin-port', '0', '--origin-admin-port', '0'], {
    CATALOG_DATA_DIR: dataDir,
    CATALOG_LOG_LEVEL: 'warn',
  });
  t.after(() => child.kill('SIGKILL'));
  await line((l) => l.startsWith('Mint another token'));
  const first = seen.findIndex((l) => l.startsWith('catalog-gateway is running'));
  const last = seen.findIndex((l) => l.startsWith('Mint another token'));
  const printed = seen.slice(first, last + 1).join('\n');
  const documented = sample('banner');
  const actualPorts = bannerPorts(printed);
  const readmePorts = bannerPorts(documented);
  assert.equal(actualPorts.length, 4);
  const banner = swapPorts(printed, actualPorts, readmePorts)
    .replace(/Bearer eyJ[\w.-]+/g, `Bearer ${SHORT_TOKEN}`)
    .replace(/SIGHUP to pid \d+/, `SIGHUP to pid ${/SIGHUP to pid (\d+)/.exec(documented)?.[1] ?? ''}`);
  assert.equal(banner, documented);

  // The banner invites its search to be pasted (twice) before the session: the session holds all the same.
  const bannerSearch = seen.find((l) => l.startsWith('curl -i -H') && l.includes('/v1/books?q=')) ?? '';
  for (let i = 0; i < 2; i++) assert.equal(spawnSync('bash', ['-c', `${bannerSearch} -o /dev/null -s -w '%{http_code}'`], { encoding: 'utf8' }).stdout, '200');
  const token = spawnSync(NODE, ['bin/catalog-gateway.js', 'token', '--data-dir', dataDir], { encoding: 'utf8' }).stdout.trim();
  const steps = sample('session')
    .split(/^\$ /m)
    .filter((step) => step !== '');
  assert.ok(steps.length >= 8, 'the session has its steps');
  for (const step of steps) {
    const [command = '', ...expected] = step.split('\n');
    const ran = spawnSync('bash', ['-c', swapPorts(command, readmePorts, actualPorts)], { env: { PATH: process.env.PATH, TOKEN: token }, encoding: 'utf8' });
    const documented = command.includes('/metrics') ? withBannerSearch(expected.join('\n')) : expected.join('\n');
    assert.equal(settled(swapPorts(ran.stdout.replaceAll('\r', ''), actualPorts, readmePorts)), settled(documented), `$ ${command}`);
  }
});

/** The session's counters as the README says they read with the banner's search run twice before: one more of each. */
function withBannerSearch(counters: string): string {
  const counted =
    /^(catalog_gateway_http_requests_total\{route="\/v1\/books",method="GET",status="200",cache="(?:miss|hit)"\}|catalog_gateway_cache_entries|catalog_gateway_origin_requests_total\{status="200"\}) (\d+)$/gm;
  return counters.replace(counted, (_, series: string, value: string) => `${series} ${String(Number(value) + 1)}`);
}

test("operations.md's list of webhook registrations has the fields the origin answers with", async (t) => {
  const operations = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
  const documented = /^\{"results":\[\{"id":"wh_.*$/m.exec(operations)?.[0] ?? '{}';
  const f = await startOriginFixture({ 'origin.db': join(tempDir(), 'catalog.db'), 'origin.books': 100 });
  t.after(() => f.stop());
  const admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
  for (const port of [9090, 47001])
    assert.equal(
      (await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: `http://127.0.0.1:${String(port)}/events`, types: ['book.availability.changed'] }))
        .status,
      201,
    );
  const listed = (await f.get('/v1/webhooks', admin)).body;
  const fields = (text: string): string[][] => (JSON.parse(text) as { results: Record<string, unknown>[] }).results.map((r) => Object.keys(r));
  assert.deepEqual(fields(documented), fields(listed));
});
