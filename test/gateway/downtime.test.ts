/**
 * Never stale after downtime (docs/caching.md, "After downtime"), with the real origin and
 * `max-age=3600`, so that nothing but the replay can show a change: a loan made while the gateway
 * was stopped shows in the first answer after it starts, while what the loan did not touch is
 * answered from the disk tier; and when the origin's event log cannot be read at start, every
 * entry kept on disk is revalidated before it is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Book } from '../../src/shared/api-types.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, send, until } from '../support/harness.ts';
import { freeHoldings, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

const availableAt = (book: Book, branch: string): boolean | undefined => book.availability.find((a) => a.branch === branch)?.available;

describe('a gateway restarted with a warm disk tier', () => {
  let origin: OriginFixture;
  let fx: GatewayFixture | undefined;
  const [lent, untouched, later] = freeHoldings(1, 3, 'ASC');

  before(async () => {
    origin = await startOriginFixture({ 'origin.maxAgeSeconds': 3600 });
  });
  after(async () => {
    await fx?.stop();
    await origin.stop();
  });

  const start = async (more: Record<string, unknown> = {}): Promise<GatewayFixture> => {
    fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, 'gateway.events.register': true, ...more });
    return fx;
  };
  const stored = async (gw: GatewayFixture, n: number): Promise<void> => {
    await until(async () => metricValue(await gw.metrics(), 'catalog_gateway_disk_writes_total') >= n);
  };

  test('shows a loan made while it was stopped in its first answer, and answers the rest from disk', async () => {
    assert.ok(lent !== undefined && untouched !== undefined);
    const first = await start();
    for (const { book } of [lent, untouched]) assert.match(String((await first.get(`/v1/books/${book}`)).headers['cache-status']), /fwd=miss; stored/);
    await stored(first, 2);
    await first.stop();

    const writer = { authorization: `Bearer ${await origin.token({ scope: 'catalog:write' })}` };
    assert.equal((await send(`${origin.origin.url}/v1/loans`, 'POST', writer, lent)).status, 201);

    const second = await start();
    const now = await second.get(`/v1/books/${lent.book}`);
    assert.match(String(now.headers['cache-status']), /fwd=miss/, 'the replayed event purged it before the first request');
    assert.equal(availableAt(JSON.parse(now.body) as Book, lent.branch), false, 'the loan shows');
    assert.match(String((await second.get(`/v1/books/${untouched.book}`)).headers['cache-status']), /; hit; ttl=\d+; detail=disk$/);
    assert.ok(metricValue(await second.metrics(), 'catalog_gateway_events_replayed_total') >= 1);
    await second.stop();
  });

  test('when the event log cannot be read at start, every entry on disk is revalidated before it is served', async () => {
    assert.ok(later !== undefined);
    const first = await start();
    await first.get(`/v1/books/${later.book}`);
    await stored(first, 1);
    await first.stop();
    // A token the origin refuses: its event log cannot be read, so what was missed is unknown.
    const second = await start({ 'gateway.events.token': 'not-a-token' });
    const reply = await second.get(`/v1/books/${later.book}`);
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['cache-status']), /fwd=stale; stored; fwd-status=304/, 'revalidated, not served as stored');
    assert.match(second.logs.text(), /every stored entry is revalidated before it is served again/);
  });
});
