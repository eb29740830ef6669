/**
 * The traps an operator met on the second day, past the first hour: reloading under `npm start`,
 * the CLI from outside the clone, the fleet beside `npm start`, a seed over a running origin,
 * each through the real CLI, npm and servers.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { until } from '../support/harness.ts';
import { NODE } from '../support/cli-process.ts';
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
  const npm = spawn('npm', ['start', '--silent', '--', '--config', configFile, '--port', '0', '--admin-port', '0', '--origin-port', '0', '--origin-admin-port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  assert.doesNotMatch(stderr, /\n\s+at /);
});

test('`reload` with no gateway running says so in one line and exits 1', () => {
  const dataDir = tempDir();
  const none = spawnSync(NODE, ['bin/catalog-gateway.js', 'reload', '--data-dir', dataDir], { encoding: 'utf8' });
  assert.equal(none.status, 1);
  assert.equal(none.stderr, `catalog-gateway reload: no gateway is running on this data directory (no pid in ${join(dataDir, 'gateway.pid')}); start one with \`npm start\` or \`catalog-gateway gateway\`, or name its --data-dir\n`);
  writeFileSync(join(dataDir, 'gateway.pid'), '2147483646\n');
  const stale = spawnSync(NODE, ['bin/catalog-gateway.js', 'reload', '--data-dir', dataDir], { encoding: 'utf8' });
  assert.equal(stale.status, 1);
  assert.match(stale.stderr, /\(pid 2147483646\) is not running/);
});
