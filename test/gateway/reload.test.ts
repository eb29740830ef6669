/**
 * SIGHUP sent to a real `gateway` process while it serves: a changed route table is applied
 * without a failed request, and an invalid file is refused with the start-up error while the old
 * configuration keeps serving. Once alone, once as a primary with two workers.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { tempDir } from '../support/config.ts';
import { runGateway } from '../support/gateway-process.ts';
import { get, metricValue } from '../support/harness.ts';
import { makeCertificate } from '../support/protocols.ts';
import { steadyLoad } from '../support/steady-load.ts';

const route = (prefix: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ prefix, mode: 'pass', auth: 'off', ...extra });

for (const workers of [1, 2]) {
  test(`SIGHUP with ${workers} worker(s): a new route table applies while serving; an invalid file is refused and the old one keeps serving`, async (t) => {
    const dir = tempDir();
    const file = join(dir, 'gateway.jsonc');
    const write = (config: unknown): void => {
      writeFileSync(file, JSON.stringify(config));
    };
    write({ gateway: { routes: [route('/a')] } });
    const { gw, url, adminUrl } = await runGateway(t, dir, ['--config', file, '--workers', String(workers)]);
    const metric = async (name: string): Promise<number> => metricValue((await get(`${adminUrl}/metrics`)).body, name);
    const reloads = (msg: string): number => gw.seen.filter((l) => l.includes(`"msg":"${msg}`)).length;
    assert.equal((await get(`${url}/b/1`)).status, 404);
    assert.equal(await metric('catalog_gateway_config_last_reload_successful'), 1);
    const startedAt = await metric('catalog_gateway_config_last_reload_success_timestamp_seconds');
    assert.ok(Math.abs(startedAt - Date.now() / 1000) < 60, 'the start counts as a successful load');

    const load = steadyLoad(url, 8, (i) => `/a/${i}`);
    // Applied in the primary and in every worker (each logs it).
    write({ gateway: { routes: [route('/a'), route('/b')], cache: { maxBytes: '32MiB' } } });
    gw.child.kill('SIGHUP');
    const restartLine = JSON.parse(await gw.line((l) => l.includes('apply only at a restart'))) as { needsRestart: string[]; msg: string };
    assert.deepEqual(restartLine.needsRestart, ['gateway.cache.maxBytes']);
    assert.match(restartLine.msg, /gateway\.cache\.maxBytes$/);
    await gw.line(() => reloads('configuration reloaded"') === (workers === 1 ? 1 : 1 + workers));
    for (let i = 0; i < 4 * workers; i++) assert.equal((await get(`${url}/b/${i}`)).status, 200, 'every worker serves the new route');
    assert.equal(await metric('catalog_gateway_config_last_reload_successful'), 1);
    const reloadedAt = await metric('catalog_gateway_config_last_reload_success_timestamp_seconds');
    assert.ok(reloadedAt >= startedAt);

    write({ gateway: { routes: [route('/a', { auth: 'maybe' })] } });
    const startupError = (() => {
      try {
        loadConfig({ env: {}, file });
      } catch (err) {
        return (err as Error).message;
      }
      return assert.fail('the file should not load');
    })();
    assert.match(startupError, /^config key gateway\.routes = .* \(from file .*gateway\.jsonc\): expected .*route 0 field auth = "maybe" is not valid/);
    gw.child.kill('SIGHUP');
    const refused = JSON.parse(await gw.line((l) => l.includes('configuration reload refused'))) as { msg: string; level: string };
    assert.equal(refused.level, 'error');
    assert.ok(refused.msg.endsWith(startupError), refused.msg);
    assert.equal(await metric('catalog_gateway_config_last_reload_successful'), 0);
    assert.equal(await metric('catalog_gateway_config_last_reload_success_timestamp_seconds'), reloadedAt);
    for (let i = 0; i < 4 * workers; i++) assert.equal((await get(`${url}/b/${i}`)).status, 200, 'the previous table still serves');

    const result = await load.stop();
    assert.deepEqual(result.failures, []);
    assert.ok(result.ok > 0);
    const exited = once(gw.child, 'exit');
    gw.child.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null]);
  });
}

test('SIGHUP: TLS files the next start would fail on refuse the reload, with the start-up error; a good pair again is a good reload', async (t) => {
  const dir = tempDir();
  const pair = makeCertificate(dir, 'server');
  const file = join(dir, 'gateway.jsonc');
  const write = (cert: string): void => {
    writeFileSync(file, JSON.stringify({ http: { tls: { cert, key: pair.key } } }));
  };
  write(pair.cert);
  const { gw, adminUrl } = await runGateway(t, dir, ['--config', file]);
  const metric = async (): Promise<number> => metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_config_last_reload_successful');
  const refusals = (): string[] => gw.seen.filter((l) => l.includes('configuration reload refused'));
  assert.equal(await metric(), 1);
  const good = readFileSync(pair.cert);

  // A path that names no file: only a restart would read it, and it would fail there.
  write(join(dir, 'nope.pem'));
  gw.child.kill('SIGHUP');
  await gw.line(() => refusals().length === 1);
  assert.match(refusals()[0] ?? '', /config keys http\.tls\.\*: .*nope\.pem cannot be read: ENOENT/);
  assert.equal(await metric(), 0);

  // The same path, its file now garbage.
  write(pair.cert);
  writeFileSync(pair.cert, 'garbage');
  gw.child.kill('SIGHUP');
  await gw.line(() => refusals().length === 2);
  assert.match(refusals()[1] ?? '', /holds no PEM certificate/);
  assert.equal(await metric(), 0);

  writeFileSync(pair.cert, good);
  gw.child.kill('SIGHUP');
  await gw.line((l) => l.includes('"msg":"configuration reloaded"'));
  assert.equal(await metric(), 1);
  const exited = once(gw.child, 'exit');
  gw.child.kill('SIGTERM');
  assert.deepEqual(await exited, [0, null]);
});
