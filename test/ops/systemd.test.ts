/** The systemd unit in ops/ passes `systemd-analyze verify`, pointed at this checkout. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../support/config.ts';

test('ops/systemd/catalog-gateway.service verifies', () => {
  const unit = readFileSync('ops/systemd/catalog-gateway.service', 'utf8');
  assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m, 'reload reloads the configuration (and reopens the logs)');
  // Installed under /opt in production; verified against this checkout, where its files exist.
  const copy = join(tempDir(), 'catalog-gateway.service');
  writeFileSync(copy, unit.replaceAll('/opt/catalog-gateway', process.cwd()));
  const verified = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(verified.stderr.trim(), '', verified.stderr);
});
