/**
 * Requests served at the end of the event loop's turn (src/gateway/end-of-turn.ts): deferred, in
 * the order they arrived, with their arrival time; and through a real gateway, a burst that
 * arrives together gets each request its own answer.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { servedAtEndOfTurn } from '../../src/gateway/end-of-turn.ts';
import { wallClock } from '../../src/shared/turn-clock.ts';
import { useRealOriginGateway } from '../support/gateway-fixture.ts';

describe('servedAtEndOfTurn', () => {
  test('serves nothing during the turn, then each request in arrival order with the time it arrived', async () => {
    const served: { req: string; res: string; arrivedAt: number }[] = [];
    const handler = servedAtEndOfTurn((req: string, res: string, arrivedAt) => {
      served.push({ req, res, arrivedAt });
    });
    const handedAt: number[] = [];
    for (const n of [1, 2, 3]) {
      handedAt.push(performance.now());
      handler(`/${n}`, `res ${n}`);
    }
    const afterAll = performance.now();
    assert.equal(served.length, 0, 'served during the turn it arrived in');
    await nextTurn();
    assert.deepEqual(
      served.map((s) => [s.req, s.res]),
      [
        ['/1', 'res 1'],
        ['/2', 'res 2'],
        ['/3', 'res 3'],
      ],
    );
    served.forEach((s, i) => {
      assert.ok(s.arrivedAt >= (handedAt[i] ?? Infinity) && s.arrivedAt <= (handedAt[i + 1] ?? afterAll), `request ${i + 1}'s time is when it was handed over`);
    });
    handler('/4', 'res 4');
    await nextTurn();
    assert.deepEqual(
      served.map((s) => s.req),
      ['/1', '/2', '/3', '/4'],
      'a later turn is served on its own',
    );
  });

  test('the requests of a turn read the wall clock once between them, and the clock moves on after', async () => {
    const clocks: number[] = [];
    const handler = servedAtEndOfTurn(() => {
      const start = Date.now();
      while (Date.now() === start);
      clocks.push(wallClock());
    });
    const before = Date.now();
    handler('/1', 'res 1');
    handler('/2', 'res 2');
    await nextTurn();
    const [first, second] = clocks;
    assert.equal(first, second, 'a millisecond passed within each, and both read the same time');
    assert.ok(first !== undefined && first >= before && first < Date.now(), 'the time read when the run began');
    const start = Date.now();
    while (Date.now() === start);
    assert.ok(wallClock() > start, 'outside a run the clock is read on each call');
  });
});

describe('a burst through a real gateway', () => {
  const setup = useRealOriginGateway();

  test('requests that arrive together, hits and misses, each get their own answer', async () => {
    const targets = ['/v1/books?q=river', '/v1/books?q=garden', '/v1/books?q=winter', '/v1/branches', '/v1/books?q=night&limit=3'];
    const { fx } = setup;
    const own = new Map<string, string>();
    for (const target of targets.slice(0, 3)) own.set(target, (await fx.get(target)).body);
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const target = targets[i % targets.length] ?? '/';
        const id = `burst-${i}`;
        return fx.get(target, { 'x-request-id': id }).then((reply) => ({ target, id, reply }));
      }),
    );
    for (const { target, id, reply } of burst) {
      assert.equal(reply.status, 200, target);
      assert.equal(reply.headers['x-request-id'], id, 'the answer is to this request');
      const known = own.get(target);
      if (known !== undefined) assert.equal(reply.body, known, `${target}: the body stored for this target`);
      else own.set(target, reply.body);
    }
    const hits = burst.filter(({ reply }) => String(reply.headers['cache-status']).includes('hit')).length;
    assert.ok(hits >= 36, `the three filled targets' 36 requests are hits (${hits} hits)`);
  });
});
