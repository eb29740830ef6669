/**
 * What an operator installs: exactly the files the container recipe copies
 * (ops/container/Containerfile), `npm ci --omit=dev` (no TypeScript, no test tools, no pinned
 * Node), then the gateway started on Node 24 as the image's entry point starts it, and refused
 * in one line on an older Node (the machine's own). No image is built here: no container registry
 * is reachable for the base image (docs/operations.md, "Packaging").
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../support/config.ts';
import { get } from '../support/harness.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

/** A Node.js older than 24 on PATH (the system's), outside the project's node_modules. */
async function olderNode(): Promise<string> {
  const { stdout } = await run('bash', ['-c', 'type -ap node'], {
    env: {
      PATH: (process.env.PATH ?? '')
        .split(':')
        .filter((dir) => !dir.includes('node_modules'))
        .join(':'),
    },
  });
  for (const candidate of stdout.split('\n').filter((line) => line !== '')) {
    const { stdout: version } = await run(candidate, ['--version']);
    if (Number(version.slice(1).split('.')[0]) < 24) return candidate;
  }
  throw new Error("no Node.js older than 24 on PATH to check the refusal with (this machine's system Node is 20)");
}

function bannerOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ctrl-C stops both servers')) resolve(out);
    });
    child.on('exit', (code) => {
      reject(new Error(`start exited ${code} before its banner:\n${out}`));
    });
  });
}

test('npm ci --omit=dev: the gateway starts and serves on Node 24; an older Node gets one clear line', async (t) => {
  const dir = tempDir('catalog-package-');
  const recipe = readFileSync(join(ROOT, 'ops/container/Containerfile'), 'utf8');
  const copied = [...recipe.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => (m[1] ?? '').split(' '));
  assert.deepEqual(copied, ['package.json', 'package-lock.json', 'package.json', 'bin', 'src', 'config']);
  const { stdout: files } = await run('git', ['ls-files', '-co', '--exclude-standard', ...new Set(copied)], { cwd: ROOT });
  for (const file of files.split('\n').filter((f) => f !== '' && existsSync(join(ROOT, f)))) {
    mkdirSync(join(dir, dirname(file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: { ...process.env, npm_config_engine_strict: 'false' },
  });

  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  for (const name of Object.keys(pkg.dependencies)) assert.ok(existsSync(join(dir, 'node_modules', name)), `runtime dependency ${name} installed`);
  for (const name of ['typescript', 'tsx', 'autocannon', 'node'])
    assert.ok(!existsSync(join(dir, 'node_modules', name)), `${name} is a dev dependency, not installed`);

  const bin = join(dir, 'bin', 'catalog-gateway.js');
  const { stdout: version } = await run(process.execPath, [bin, '--version']);
  assert.equal(version, `catalog-gateway ${pkg.version} (Node.js ${process.version})\n`);

  const old = await olderNode();
  const refused = await run(old, [bin, 'start']).then(
    () => assert.fail('an older Node must be refused'),
    (err: unknown) => err as { code: number; stdout: string; stderr: string },
  );
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /^catalog-gateway needs Node\.js 24 or later; this is v\d+\.\d+\.\d+\. [^\n]+\n$/, 'one line, no stack trace');

  const child = spawn(process.execPath, [bin, 'start', '--port', '0', '--origin-port', '0', '--admin-port', '0', '--origin-admin-port', '0'], {
    cwd: dir,
    env: { PATH: process.env.PATH, CATALOG_ORIGIN_BOOKS: '500', CATALOG_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const banner = await bannerOf(child);
  const curl = /curl -i -H 'Authorization: Bearer ([^']+)' '([^']+)'/.exec(banner);
  assert.ok(curl !== null, banner);
  const [, token = '', url = ''] = curl;
  const first = await get(url, { authorization: `Bearer ${token}` });
  assert.equal(first.status, 200);
  assert.match(String((await get(url, { authorization: `Bearer ${token}` })).headers['cache-status']), /; hit/);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
