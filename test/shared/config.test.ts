import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, PROJECT_ROOT, loadConfig } from '../../src/config/load.ts';
import { SCHEMA, envName } from '../../src/config/schema.ts';
import { tempDir } from '../support/config.ts';

describe('config loader', () => {
  test('the default file supplies every key of the schema', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(Object.keys(config).sort(), Object.keys(SCHEMA).sort());
    assert.equal(config['gateway.cache.maxBytes'], 256 * 1024 * 1024);
    assert.ok(Object.isFrozen(config));
  });

  test('env overrides the file, flags override env', () => {
    const env = { [envName('gateway.port')]: '9000', [envName('origin.port')]: '9001' };
    const config = loadConfig({ env, flags: [{ key: 'gateway.port', flag: '--port', value: '9100' }] });
    assert.equal(config['gateway.port'], 9100);
    assert.equal(config['origin.port'], 9001);
  });

  test('a config file is layered over the defaults', () => {
    const file = join(tempDir(), 'c.jsonc');
    writeFileSync(file, '// comment\n{ "gateway": { "cache": { "maxBytes": 2097152 } } }');
    assert.equal(loadConfig({ env: {}, file })['gateway.cache.maxBytes'], 2097152);
  });

  test('a bad value names the key, the source and the value', () => {
    assert.throws(
      () => loadConfig({ env: { CATALOG_GATEWAY_PORT: 'eighty' } }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.includes('gateway.port') &&
        err.message.includes('env CATALOG_GATEWAY_PORT') &&
        err.message.includes('"eighty"'),
    );
    assert.throws(
      () => loadConfig({ env: {}, flags: [{ key: 'origin.maxAgeSeconds', flag: '--max-age', value: '-1' }] }),
      /origin\.maxAgeSeconds = "-1" \(from flag --max-age\)/,
    );
    assert.throws(() => loadConfig({ env: {}, overrides: { 'gateway.origin': 'ftp://x' } }), /gateway\.origin/);
  });

  test('an unknown key in a file is refused', () => {
    const file = join(tempDir(), 'c.jsonc');
    writeFileSync(file, '{ "gateway": { "cache": { "maxbytes": 1 } } }');
    assert.throws(() => loadConfig({ env: {}, file }), /unknown config key gateway\.cache\.maxbytes \(from file /);
  });

  test('env names follow the key', () => {
    assert.equal(envName('gateway.cache.maxBytes'), 'CATALOG_GATEWAY_CACHE_MAX_BYTES');
    assert.equal(envName('dataDir'), 'CATALOG_DATA_DIR');
  });

  test('sizes and durations take units, from a file, env or flags, and must come out whole', () => {
    const file = join(tempDir(), 'c.jsonc');
    writeFileSync(file, '{ "gateway": { "cache": { "maxBytes": "512MiB", "maxEntryBytes": "64KiB" } }, "origin": { "maxAgeSeconds": "1h" } }');
    const config = loadConfig({
      env: { CATALOG_HTTP_SHUTDOWN_TIMEOUT_MS: '90s', CATALOG_GATEWAY_UPSTREAM_MAX_RESPONSE_BYTES: '2MB' },
      file,
      flags: [{ key: 'gateway.upstream.connectTimeoutMs', flag: '--x', value: '1.5s' }],
    });
    assert.equal(config['gateway.cache.maxBytes'], 512 * 1024 * 1024);
    assert.equal(config['gateway.cache.maxEntryBytes'], 64 * 1024);
    assert.equal(config['origin.maxAgeSeconds'], 3600);
    assert.equal(config['http.shutdownTimeoutMs'], 90_000);
    assert.equal(config['gateway.upstream.maxResponseBytes'], 2_000_000);
    assert.equal(config['gateway.upstream.connectTimeoutMs'], 1500);
    assert.equal(loadConfig({ env: { CATALOG_ORIGIN_MAX_AGE_SECONDS: '120' } })['origin.maxAgeSeconds'], 120, "a bare number is the key's own unit");
    assert.throws(
      () => loadConfig({ env: { CATALOG_ORIGIN_MAX_AGE_SECONDS: '1500ms' } }),
      /origin\.maxAgeSeconds = "1500ms" \(from env CATALOG_ORIGIN_MAX_AGE_SECONDS\): expected from 0 to 31536000 s, as an integer or with a unit/,
    );
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_CACHE_MAX_BYTES: '256 parsecs' } }), /gateway\.cache\.maxBytes = "256 parsecs"/);
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_CACHE_MAX_BYTES: '0.5B' } }), /gateway\.cache\.maxBytes/, 'half a byte is not whole');
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_CACHE_MAX_BYTES: '100TiB' } }), /from 1048576 to/, 'bounds still hold');
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_PORT: '80s' } }), /gateway\.port/, 'a key without a unit takes none');
  });

  test('the origin probe is an absolute http(s) URL or a path, or null (the default) for the origin itself', () => {
    assert.equal(loadConfig({ env: {} })['gateway.upstream.probe'], null);
    assert.equal(loadConfig({ env: { CATALOG_GATEWAY_UPSTREAM_PROBE: 'null' } })['gateway.upstream.probe'], null);
    assert.equal(loadConfig({ env: { CATALOG_GATEWAY_UPSTREAM_PROBE: '/healthz' } })['gateway.upstream.probe'], '/healthz');
    assert.equal(
      loadConfig({ env: { CATALOG_GATEWAY_UPSTREAM_PROBE: 'http://10.0.0.5:9091/readyz' } })['gateway.upstream.probe'],
      'http://10.0.0.5:9091/readyz',
    );
    assert.throws(
      () => loadConfig({ env: { CATALOG_GATEWAY_UPSTREAM_PROBE: 'healthz' } }),
      /config key gateway\.upstream\.probe = "healthz" \(from env CATALOG_GATEWAY_UPSTREAM_PROBE\): expected an http:\/\/ or https:\/\/ URL, or a path starting with \/, or null/,
    );
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_UPSTREAM_PROBE: 'ftp://x/readyz' } }), /gateway\.upstream\.probe/);
  });

  test('every CATALOG_* variable must name a key; the others are left alone', () => {
    const known = { CATALOG_CONFIG: '', CATALOG_DATA_DIR: tempDir(), CATALOG_ORIGIN_BOOKS: '10', CATALOG_GATEWAY_PORT: '0', HOME: '/x', CATALOGUE: 'y' };
    assert.equal(loadConfig({ env: known })['origin.books'], 10);
    assert.throws(
      () => loadConfig({ env: { CATALOG_ORIGIN_BOOK: '10' } }),
      /^ConfigError: unknown environment variable CATALOG_ORIGIN_BOOK \(did you mean CATALOG_ORIGIN_BOOKS\?\)/,
    );
    assert.throws(
      () => loadConfig({ env: { CATALOG_SOMETHING_ELSE_ENTIRELY: '1' } }),
      (err: unknown) => err instanceof ConfigError && !err.message.includes('did you mean'),
    );
  });

  test('an unknown file key gets the nearest key or object name', () => {
    const file = join(tempDir(), 'c.jsonc');
    writeFileSync(file, '{ "log": { "levle": "warn" } }');
    assert.throws(() => loadConfig({ env: {}, file }), /unknown config key log\.levle \(from file .*\) \(did you mean log\.level\?\)/);
    writeFileSync(file, '{ "gatway": {} }');
    assert.throws(() => loadConfig({ env: {}, file }), /unknown config key gatway .*\(did you mean gateway\?\)/);
  });

  test('routes that are not JSON are reported as such, with the position', () => {
    assert.throws(() => loadConfig({ env: { CATALOG_GATEWAY_ROUTES: '[{prefix:"/"}]' } }), /config key gateway\.routes = .* is not valid JSON: .*position 2/);
    assert.throws(
      () => loadConfig({ env: { CATALOG_GATEWAY_ROUTES: '[]' } }),
      /expected a non-empty list of routes/,
      'JSON that is not a route table is still said so',
    );
  });

  test("a server's API and admin listener may not share a port, unless both pick a free one", () => {
    assert.throws(
      () => loadConfig({ env: { CATALOG_ORIGIN_PORT: '9500' }, flags: [{ key: 'origin.adminPort', flag: '--admin-port', value: '9500' }] }),
      /config keys origin\.port \(from env CATALOG_ORIGIN_PORT\) and origin\.adminPort \(from flag --admin-port\) are both 9500/,
    );
    assert.equal(loadConfig({ env: { CATALOG_GATEWAY_PORT: '0', CATALOG_GATEWAY_ADMIN_PORT: '0' } })['gateway.port'], 0);
  });

  test("the default data directory is the package's; one given is relative to the current directory", () => {
    assert.equal(loadConfig({ env: {} }).dataDir, join(PROJECT_ROOT, 'data'));
    assert.equal(loadConfig({ env: { CATALOG_DATA_DIR: 'elsewhere' } }).dataDir, join(process.cwd(), 'elsewhere'));
  });
});
