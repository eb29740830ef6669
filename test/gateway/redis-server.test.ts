/**
 * The local Redis that `catalog-gateway fleet`, the bench and the tests start (src/cli/redis-server.ts)
 * never outlives the process that started it, however that process ends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { answersPing, startRedisProcess } from '../../src/cli/redis-server.ts';
import { tempDir } from '../support/config.ts';

async function stopsAnswering(port: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!(await answersPing(port))) return true;
    await sleep(50);
  }
  return false;
}

test('a Redis started by a process that is then SIGKILLed goes with it', async () => {
  const module = new URL('../../src/cli/redis-server.ts', import.meta.url).pathname;
  const script = `const { startRedisProcess } = await import(${JSON.stringify(module)}); const r = await startRedisProcess({ dir: ${JSON.stringify(tempDir('catalog-leash-'))} }); console.log(r.port); setInterval(() => {}, 60_000);`;
  const starter = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(starter.stdout, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  assert.ok(await answersPing(port), 'the Redis it started answers');
  starter.kill('SIGKILL');
  await once(starter, 'exit');
  assert.ok(await stopsAnswering(port), 'the Redis stopped answering within 5 s of its starter dying');
});

test('kill() takes the server down at once, and restart() brings it back empty on the same port', async () => {
  const redis = await startRedisProcess({ dir: tempDir('catalog-leash-') });
  try {
    await redis.cli('set', 'k', 'v');
    await redis.kill();
    assert.equal(await answersPing(redis.port), false);
    await redis.restart();
    assert.equal(await redis.cli('get', 'k'), '');
  } finally {
    await redis.kill();
  }
});
