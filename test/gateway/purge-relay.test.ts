/**
 * A worker's purge relays (src/gateway/workers/messages.ts) over a real IPC channel: this test
 * plays the primary to a child process that relays twelve purges at once.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { NODE } from '../support/cli-process.ts';

interface Report {
  readonly whileOut: number;
  readonly afterwards: number;
  readonly purged: readonly number[];
  readonly warnings: readonly string[];
}

test('twelve concurrent relays share one message listener on process, and each gets its own answer', async () => {
  const child = fork('test/support/relay-worker.ts', { execPath: NODE, execArgv: ['--import', 'tsx'] });
  const relays: { id: number }[] = [];
  const report = new Promise<Report>((resolve) => {
    child.on('message', (message: { ready?: true; report?: Report; type?: string; id?: number }) => {
      if (message.ready === true) child.send({ relay: 12 });
      if (message.report !== undefined) resolve(message.report);
      if (message.type !== 'catalog-gateway:relay' || message.id === undefined) return;
      relays.push({ id: message.id });
      // Answered once all are out, in reverse order, each with its own count.
      if (relays.length === 12) for (const { id } of relays.toReversed()) child.send({ type: 'catalog-gateway:purged', id, purged: id * 10 });
    });
  });
  const { whileOut, afterwards, purged, warnings } = await report;
  await once(child, 'exit');
  assert.equal(whileOut, 1, 'one listener however many relays are out');
  assert.equal(afterwards, 0, 'none once all are answered');
  assert.deepEqual(warnings, []);
  assert.deepEqual(
    purged,
    relays.map(({ id }) => id * 10),
  );
});
