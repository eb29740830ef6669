/**
 * The loop of issue 14 with real servers: a loan through the gateway, the origin's signed event
 * to the gateway it registered, and the purge that makes the gateway show the new availability,
 * with `max-age=3600` so that nothing but the purge can.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Book } from '../../src/shared/api-types.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, send, until } from '../support/harness.ts';
import { freeHoldings, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

const availableAt = (book: Book, branch: string): boolean | undefined => book.availability.find((a) => a.branch === branch)?.available;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('availability events from the real origin purge the gateway', () => {
  let origin: OriginFixture;
  let fx: GatewayFixture;
  let writer: Record<string, string>;
  const [first, second] = freeHoldings(1, 2, 'DESC');

  before(async () => {
    origin = await startOriginFixture({ 'origin.maxAgeSeconds': 3600 });
    fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, 'gateway.events.register': true });
    writer = { authorization: `Bearer ${await fx.token('catalog:read catalog:write')}` };
  });
  after(async () => {
    await fx.stop();
    await origin.stop();
  });

  const purgedEvents = async (): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_events_received_total', { outcome: 'purged' });

  test('a loan made through the gateway is shown by the gateway as soon as its event arrives', async () => {
    assert.ok(first !== undefined);
    const book = JSON.parse((await fx.get(`/v1/books/${first.book}`)).body) as Book;
    assert.equal(availableAt(book, first.branch), true);
    const search = `/v1/books?q=${encodeURIComponent(book.title)}&branch=${first.branch}&available=true&limit=100`;
    const listed = (reply: { body: string }): boolean => (JSON.parse(reply.body) as { results: Book[] }).results.some((b) => b.id === first.book);
    assert.ok(listed(await fx.get(search)));
    assert.match(String((await fx.get(`/v1/books/${first.book}`)).headers['cache-status']), /; hit/);
    assert.match(String((await fx.get(search)).headers['cache-status']), /; hit/);

    const lent = await send(`${fx.gateway.url}/v1/loans`, 'POST', writer, first);
    assert.equal(lent.status, 201, lent.body);
    assert.equal(lent.headers['cache-control'], 'no-store');
    assert.match(String(lent.headers['cache-status']), /fwd=bypass/);
    assert.equal(lent.headers.location, `/v1/loans/${(JSON.parse(lent.body) as { id: string }).id}`);

    await until(async () => (await purgedEvents()) >= 1);
    const after = await fx.get(`/v1/books/${first.book}`);
    assert.match(String(after.headers['cache-status']), /fwd=miss/);
    assert.equal(availableAt(JSON.parse(after.body) as Book, first.branch), false);
    assert.ok(!listed(await fx.get(search)));
    assert.equal(after.headers['surrogate-key'], undefined, 'tags stay between origin and gateway');
  });

  test('loans need catalog:write at the gateway too, and loan answers are never stored', async () => {
    assert.ok(first !== undefined);
    assert.equal((await send(`${fx.gateway.url}/v1/loans`, 'POST', {}, first)).status, 401);
    assert.equal((await send(`${fx.gateway.url}/v1/loans`, 'POST', { authorization: `Bearer ${await fx.token()}` }, first)).status, 403);
    assert.equal((await send(`${fx.gateway.url}/v1/loans`, 'POST', writer, first)).status, 409);
    const before = fx.gateway.cacheStats();
    await send(`${fx.gateway.url}/v1/loans/ln_1`, 'GET', writer);
    assert.deepEqual(fx.gateway.cacheStats(), before);
  });

  test('events committed while the gateway is down reach it when it is back', async () => {
    assert.ok(second !== undefined);
    const adminPort = Number(new URL(fx.gateway.adminUrl).port);
    await fx.get(`/v1/books/${second.book}`);
    await fx.stop();
    const originWriter = { authorization: `Bearer ${await origin.token({ scope: 'catalog:write' })}` };
    assert.equal((await send(`${origin.origin.url}/v1/loans`, 'POST', originWriter, second)).status, 201);
    await until(async () => metricValue(await origin.metrics(), 'catalog_origin_event_deliveries_total', { outcome: 'failed' }) >= 1);

    fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, 'gateway.events.register': true, 'gateway.adminPort': adminPort });
    await fx.get(`/v1/books/${second.book}`);
    await until(async () => {
      origin.clock.advance(2000);
      await pause(20);
      return (await purgedEvents()) >= 1;
    }, 6_000);
    assert.equal(metricValue(await origin.metrics(), 'catalog_origin_outbox_depth'), 0);
    assert.equal(availableAt(JSON.parse((await fx.get(`/v1/books/${second.book}`)).body) as Book, second.branch), false);
  });
});
