/**
 * node:http's private fields (src/shared/node-http-internals.ts): the pinned Node has every one,
 * and the suites that cover what they serve pass as well with all of them replaced by the public
 * API, as on a Node that renamed them, each replacement reported by a log line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { performServerHandshake } from 'node:http2';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { internals, keepStreamsInSlots } from '../../src/shared/node-http-internals.ts';
import { SlotTable } from '../../src/shared/slot-table.ts';
import { NODE } from '../support/cli-process.ts';

const SUITES = [
  'test/gateway/request-teardown.test.ts',
  'test/shared/client-errors.test.ts',
  'test/gateway/hostile-requests.test.ts',
  'test/gateway/http-routes.test.ts',
  'test/gateway/edge.test.ts',
  'test/gateway/caching.test.ts',
  'test/gateway/listeners.test.ts',
];

/** `node args` with every private field replaced; its exit code and output. */
async function publicOnly(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_NODE_HTTP: 'public' };
  // Otherwise the child's test runner reports to this one instead of printing.
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(NODE, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

test('the pinned Node has every private field the gateway uses', () => {
  assert.deepEqual(internals, { endSignal: true, drain: true, headText: true, inFlight: true, streamTable: true, tickObject: true });
});

test('with a tick object held, the ticks made after full collections keep its map', async () => {
  // Each tick's map is compared as the tick is made and the tick is not kept, so that only the
  // object the module holds is alive through the collections (and V8's natives compare maps).
  const script = `
    import { createHook } from 'node:async_hooks';
    import { heldTickObject } from ${JSON.stringify(new URL('../../src/shared/node-http-internals.ts', import.meta.url).pathname)};
    const same = [];
    const hook = createHook({ init(id, type, trigger, tick) { if (type === 'TickObject') same.push(%HaveSameMap(tick, heldTickObject)); } });
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      gc();
      hook.enable();
      process.nextTick(() => undefined);
      hook.disable();
    }
    console.log(JSON.stringify(same));
  `;
  const child = spawn(NODE, ['--expose-gc', '--allow-natives-syntax', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0);
  assert.deepEqual(JSON.parse(output), [true, true, true, true]);
});

test("an HTTP/2 session's streams go into slots in place of Node's Map and Set", () => {
  const socket = new Socket();
  const session = performServerHandshake(socket);
  try {
    const state = Object.getOwnPropertySymbols(session).find((s) => s.description === 'state');
    assert.ok(state !== undefined);
    const tables = (): unknown[] => {
      const own = (session as unknown as Record<symbol, { streams: unknown; pendingStreams: unknown }>)[state];
      return [own?.streams, own?.pendingStreams];
    };
    assert.deepEqual(
      tables().map((table) => Object.prototype.toString.call(table)),
      ['[object Map]', '[object Set]'],
    );
    keepStreamsInSlots(session);
    assert.ok(tables().every((table) => table instanceof SlotTable));
  } finally {
    session.destroy();
    socket.destroy();
  }
});

test('each field replaced is reported by a warning', async () => {
  const script = "import pino from 'pino'; import { reportNodeHttpInternals } from './src/shared/node-http-internals.ts'; reportNodeHttpInternals(pino());";
  const { code, output } = await publicOnly(['--input-type=module', '-e', script]);
  assert.equal(code, 0, output);
  const uses = output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { use: string; level: number });
  assert.deepEqual(
    uses.map((u) => u.use),
    ['endSignal', 'drain', 'headText', 'inFlight', 'streamTable', 'tickObject'],
  );
  assert.ok(uses.every((u) => u.level === 40));
});

test('the suites that cover them pass with the public API alone', { timeout: 600_000 }, async () => {
  const { code, output } = await publicOnly(['--test', '--test-concurrency=1', '--test-reporter=dot', ...SUITES]);
  assert.equal(code, 0, output.slice(-4000));
});
