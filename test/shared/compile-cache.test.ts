/**
 * The bin enables Node's compile cache and `precompile` fills it, so a start with the gateway's
 * V8 flags never loads the TypeScript stripper (a WebAssembly module that keeps about 25 MiB of
 * a process's memory). Node loads the stripper as an internal module, so `process.moduleLoadList`
 * shows whether a run needed it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GATEWAY_NODE_FLAGS } from '../../src/loadtest/server-process.ts';
import { NODE } from '../support/cli-process.ts';

const PROBE = "data:text/javascript,process.on('exit',()=>process.stderr.write('stripper='+process.moduleLoadList.some((m)=>m.includes('amaro'))+'\\n'))";

/** Runs the CLI with the probe; says what it printed and whether it loaded the stripper. */
function cli(cacheDir: string, args: readonly string[], flags: readonly string[] = GATEWAY_NODE_FLAGS): { stdout: string; stripper: boolean } {
  const run = spawnSync(NODE, [...flags, '--import', PROBE, 'bin/catalog-gateway.js', ...args], {
    env: { ...process.env, NODE_COMPILE_CACHE: cacheDir, CATALOG_DATA_DIR: cacheDir },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const probed = /stripper=(true|false)/.exec(run.stderr);
  assert.ok(probed, `the probe reported nothing: ${run.stderr}`);
  return { stdout: run.stdout, stripper: probed[1] === 'true' };
}

test('after `precompile`, the CLI runs every module, the fleet too, without loading the TypeScript stripper', (t) => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'catalog-compile-cache-'));
  t.after(() => {
    rmSync(cacheDir, { recursive: true, force: true });
  });
  // `token` loads every command's modules: with an empty cache that needs the stripper.
  assert.equal(cli(cacheDir, ['token']).stripper, true);

  const filled = cli(cacheDir, ['precompile']);
  assert.match(filled.stdout, new RegExp(`^compile cache: ${cacheDir}/v24\\.`));
  assert.equal(cli(cacheDir, ['token']).stripper, false);
  // precompile itself loads the lazily loaded fleet module as well: all of it came from the cache.
  assert.equal(cli(cacheDir, ['precompile']).stripper, false);
  // Node keys the cache by V8 flags: other flags find nothing, which is why every entry point
  // that precompiles uses the servers' flags. (Without any, the bin's launcher adds the servers'.)
  assert.equal(cli(cacheDir, ['token'], [...GATEWAY_NODE_FLAGS, '--stack-size=900']).stripper, true);
  assert.equal(cli(cacheDir, ['token'], []).stripper, false);
});
