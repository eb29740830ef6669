import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import type { Config } from '../../src/config/schema.ts';
import { LIVE_KEYS, LiveConfig } from '../../src/gateway/reload/live-config.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { testConfig } from '../support/config.ts';
import { captureLogs, metricValue } from '../support/harness.ts';

function liveConfig(): { live: LiveConfig; config: Config; logs: ReturnType<typeof captureLogs>; registry: Registry } {
  const config = testConfig({ 'log.level': 'info' });
  const logs = captureLogs();
  const live = new LiveConfig(config, createLogger(config, 'test', logs));
  const registry = new Registry();
  live.registerGauges(registry);
  return { live, config, logs, registry };
}

test('a part that cannot build refuses the reload: no part swaps, the running configuration stays, the gauge says 0', async () => {
  const { live, config, logs, registry } = liveConfig();
  const swapped: string[] = [];
  live.add({ prepare: () => () => swapped.push('first') });
  live.add({
    prepare(next) {
      if (next['gateway.rateLimit.perIpPerSecond'] === 7) throw new Error('the certificate does not match its key');
      return () => swapped.push('second');
    },
  });
  const refused = live.apply({ ...config, 'gateway.rateLimit.perIpPerSecond': 7 });
  assert.deepEqual(refused, { ok: false, error: 'the certificate does not match its key' });
  assert.deepEqual(swapped, []);
  assert.equal(live.current, config);
  assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_config_last_reload_successful'), 0);
  assert.match(String(logs.lines().at(-1)?.msg), /^configuration reload refused, still serving the previous one: the certificate does not match its key$/);

  const applied = live.apply({ ...config, 'gateway.rateLimit.perIpPerSecond': 8, 'gateway.port': 1234 });
  assert.deepEqual(applied, { ok: true, applied: ['gateway.rateLimit.perIpPerSecond'], needsRestart: ['gateway.port'] });
  assert.deepEqual(swapped, ['first', 'second']);
  assert.equal(live.current['gateway.rateLimit.perIpPerSecond'], 8);
  assert.equal(live.current['gateway.port'], config['gateway.port'], 'a key that is not live keeps its running value');
  assert.equal(metricValue(await registry.metrics(), 'catalog_gateway_config_last_reload_successful'), 1);
});

test('a loader that throws (an invalid file) is refused with its message', () => {
  const { live, config } = liveConfig();
  const outcome = live.reload(() => {
    throw new Error('config key gateway.routes = [] (from file x.jsonc): expected a non-empty list of routes');
  });
  assert.equal(outcome.ok, false);
  assert.equal(live.current, config);
});

test('docs/operations.md names every key a reload applies', () => {
  const doc = readFileSync('docs/operations.md', 'utf8');
  for (const key of LIVE_KEYS) {
    const family = key.startsWith('gateway.rateLimit.') ? 'gateway.rateLimit.*' : key;
    assert.ok(doc.includes(`\`${family}\``), `docs/operations.md does not name ${key}`);
  }
});
