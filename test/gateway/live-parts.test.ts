import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { processParts } from '../../src/gateway/process-parts.ts';
import { LiveConfig } from '../../src/gateway/reload/live-config.ts';
import { RouteTable } from '../../src/gateway/routes/route-table.ts';
import { livePipeline, type SharedDeps } from '../../src/gateway/reload/live-parts.ts';
import { parseCredentialNames } from '../../src/shared/credentials.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { testConfig } from '../support/config.ts';
import { captureLogs } from '../support/harness.ts';

/** Stand-ins for the parts a reload never rebuilds: only their identity is checked. */
function shared(): SharedDeps {
  return {
    credentialNames: parseCredentialNames('access_token'),
    routesOf: (config) => new RouteTable(config['gateway.routes'], config['auth.requiredScope'], config['gateway.cache.targetedFields']),
    now: () => 0,
    edge: { isDraining: () => false, unfinished: new Set<ServerResponse>() },
    authenticate: {} as SharedDeps['authenticate'],
    cached: {} as SharedDeps['cached'],
    forward: {} as SharedDeps['forward'],
    log: {} as SharedDeps['log'],
  };
}

test('a reload rebuilds only what the live keys set, in a new settings object; each step gets its own part', () => {
  const config = testConfig({ 'gateway.rateLimit.perIpPerSecond': 5, 'gateway.rateLimit.perTokenPerSecond': 5 });
  const live = new LiveConfig(config, createLogger(config, 'test', captureLogs()));
  const given = shared();
  const settings = livePipeline(live, given);

  const first = settings();
  assert.equal(first.edge.targetRules.maxBytes, config['http.maxTargetBytes']);
  assert.equal(first.edge.targetRules.credentialNames, given.credentialNames);
  assert.equal(first.edge.unfinished, given.edge.unfinished);
  assert.equal(first.steps.cached.clients, first.edge.clients, 'one client address per configuration, for the edge and both steps that forward');
  assert.equal(first.steps.forward.clients, first.edge.clients);
  assert.equal(first.log, given.log);

  assert.equal(live.apply({ ...config, 'http.trustedProxies': ['10.0.0.0/8'], 'http.maxTargetBytes': 4096 }).ok, true);
  const second = settings();
  assert.notEqual(second, first, 'a request that read the old settings keeps them whole');
  assert.equal(first.edge.targetRules.maxBytes, config['http.maxTargetBytes']);
  assert.equal(second.edge.targetRules.maxBytes, 4096);
  assert.notEqual(second.edge.clients, first.edge.clients);
  assert.equal(second.steps.forward.clients, second.edge.clients);
  assert.equal(second.edge.ipLimits, first.edge.ipLimits, 'unchanged limits keep their buckets: no client gets a fresh burst');
  assert.equal(second.steps.authenticate.tokenLimits, first.steps.authenticate.tokenLimits);

  assert.equal(live.apply({ ...live.current, 'gateway.rateLimit.perIpPerSecond': 9 }).ok, true);
  const third = settings();
  assert.notEqual(third.edge.ipLimits, second.edge.ipLimits);
  assert.equal(third.steps.authenticate.tokenLimits, second.steps.authenticate.tokenLimits);
});

test('one route table per configuration, for the request path and a purge by URL alike', () => {
  const config = testConfig();
  const parts = processParts(config, { logDestination: captureLogs() });
  const table = parts.routesOf(parts.live.current);
  assert.equal(parts.routesOf(config), table, 'asked again, the same table');
  const pass = {
    prefix: '/',
    mode: 'pass',
    auth: 'off',
    scope: null,
    staleWhileRevalidateSeconds: 0,
    staleIfErrorSeconds: 0,
    staleIfDisconnectedSeconds: 0,
    requestCacheControl: 'honour',
  } as const;
  assert.equal(parts.live.apply({ ...config, 'gateway.routes': [pass] }).ok, true);
  const reloaded = parts.routesOf(parts.live.current);
  assert.notEqual(reloaded, table);
  assert.equal(reloaded.match('/v1/books')?.mode, 'pass');
  assert.equal(parts.keyOf('/v1/books?q=a'), undefined, 'a pass route stores nothing, by the table now in force');
});
