/** Graceful shutdown: what clients see while the origin drains, and that it ends cleanly. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { get } from '../support/harness.ts';
import { json, openBusyConnection, startOriginFixture, TEST_BOOKS } from '../support/origin-fixture.ts';

test('while draining: a request on an open connection gets 503 with Connection: close, /readyz is 503, then the origin stops', async (t) => {
  const f = await startOriginFixture();
  t.after(() => f.stop());
  assert.equal((await get(`${f.origin.adminUrl}/readyz`)).status, 200);
  const busy = await openBusyConnection(f.origin.url, await f.token(), 'GET', '/v1/books?q=river');
  t.after(() => {
    busy.close();
  });

  const stopped = f.stop();
  const ready = await get(`${f.origin.adminUrl}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(json(ready).type, 'https://catalog.example/problems/not-ready');

  const reply = await busy.finish();
  assert.equal(reply.status, 503);
  assert.equal(reply.headers.connection, 'close');
  assert.equal(reply.headers['cache-control'], 'no-store');
  assert.equal(json(reply).type, 'https://catalog.example/problems/not-ready');
  await stopped;
  await assert.rejects(request(`${f.origin.url}/v1/branches`), { code: 'ECONNREFUSED' });
  await assert.rejects(request(`${f.origin.adminUrl}/healthz`), { code: 'ECONNREFUSED' });
  assert.ok(f.logs.lines().some((l) => l.msg === 'request' && l.status === 503 && l.path === '/v1/books?q=river'));
});

test('stop() is idempotent and an idle origin stops at once', async () => {
  const f = await startOriginFixture();
  assert.equal((await f.get('/v1/branches')).status, 200);
  await Promise.all([f.stop(), f.stop()]);
  await f.stop();
  await assert.rejects(request(`${f.origin.adminUrl}/healthz`), { code: 'ECONNREFUSED' });
});

test('an existing catalog of another size is served as it is, with a warning that origin.books applies only when seeding', async () => {
  const f = await startOriginFixture({ 'origin.books': 5000 });
  try {
    const warning = f.logs.lines().find((l) => typeof l.msg === 'string' && l.msg.includes('applies only when seeding'));
    assert.ok(warning !== undefined);
    assert.equal(warning.books, TEST_BOOKS);
    assert.equal(warning.configured, 5000);
  } finally {
    await f.stop();
  }
});
