import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Book } from '../../src/shared/api-types.ts';
import { freeHoldings, json, sharedCatalog, startOriginFixture, type Holding, type OriginFixture } from '../support/origin-fixture.ts';
import { metricValue, send, until } from '../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { streamEndlessBody } from '../support/endless-body.ts';

function availableAt(book: Book, branch: string): boolean | undefined {
  return book.availability.find((a) => a.branch === branch)?.available;
}

describe('loans', () => {
  let f: OriginFixture;
  let writer: Record<string, string>;
  const [single, other] = freeHoldings(1, 2);
  const [double] = freeHoldings(2, 1);
  const [, , contested, kept] = freeHoldings(1, 4);

  before(async () => {
    f = await startOriginFixture();
    writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:read catalog:write' })}` };
  });
  after(() => f.stop());

  const lend = (holding: Holding | undefined, headers = writer): ReturnType<typeof send> => send(`${f.origin.url}/v1/loans`, 'POST', headers, holding);

  test('lending the last free copy makes the book unavailable there; returning it makes it available again', async () => {
    assert.ok(single !== undefined);
    const beforeReply = await f.get(`/v1/books/${single.book}`);
    assert.equal(availableAt(json<Book>(beforeReply), single.branch), true);

    const lent = await lend(single);
    assert.equal(lent.status, 201, lent.body);
    const loan = json<{ id: string; book: string; branch: string; since: string }>(lent);
    assert.match(loan.id, /^ln_[0-9]+$/);
    assert.equal(lent.headers.location, `/v1/loans/${loan.id}`);
    assert.equal(lent.headers['cache-control'], 'no-store');
    assert.deepEqual({ book: loan.book, branch: loan.branch }, single);
    assert.ok(!Number.isNaN(Date.parse(loan.since)));

    const changed = await f.get(`/v1/books/${single.book}`, { 'if-none-match': String(beforeReply.headers.etag) });
    assert.equal(changed.status, 200, 'the old entity tag no longer matches');
    assert.equal(availableAt(json<Book>(changed), single.branch), false);

    const shown = await send(`${f.origin.url}/v1/loans/${loan.id}`, 'GET', writer);
    assert.equal(shown.status, 200);
    assert.deepEqual(json(shown), loan);

    assert.equal((await lend(single)).status, 409, 'no copy is free any more');

    const returned = await send(`${f.origin.url}/v1/loans/${loan.id}`, 'DELETE', writer);
    assert.equal(returned.status, 204);
    assert.equal(availableAt(json<Book>(await f.get(`/v1/books/${single.book}`)), single.branch), true);
    assert.equal((await send(`${f.origin.url}/v1/loans/${loan.id}`, 'DELETE', writer)).status, 404, 'already returned');
    assert.equal((await send(`${f.origin.url}/v1/loans/${loan.id}`, 'GET', writer)).status, 404);
  });

  test('a book with two copies stays available after one loan', async () => {
    assert.ok(double !== undefined);
    const first = await lend(double);
    assert.equal(first.status, 201);
    assert.equal(availableAt(json<Book>(await f.get(`/v1/books/${double.book}`)), double.branch), true);
    assert.equal((await lend(double)).status, 201);
    assert.equal(availableAt(json<Book>(await f.get(`/v1/books/${double.book}`)), double.branch), false);
    assert.equal((await lend(double)).status, 409);
  });

  test('searches filtered by availability follow the loans', async () => {
    assert.ok(other !== undefined);
    const book = json<Book>(await f.get(`/v1/books/${other.book}`));
    const word = book.title.split(' ').find((w) => /^[A-Za-z]{4,}$/.test(w)) ?? book.title;
    const search = async (available: boolean): Promise<string[]> => {
      const reply = await f.get(`/v1/books?q=${encodeURIComponent(`"${book.title}"`)}&branch=${other.branch}&available=${available}&limit=100`);
      assert.equal(reply.status, 200, `${word}: ${reply.body}`);
      assert.match(String(reply.headers['surrogate-key']), new RegExp(`(^| )avail_${other.branch}( |$)`));
      return json<{ results: Book[] }>(reply).results.map((b) => b.id);
    };
    assert.ok((await search(true)).includes(other.book));
    const lent = json<{ id: string }>(await lend(other));
    assert.ok(!(await search(true)).includes(other.book));
    assert.ok((await search(false)).includes(other.book));
    await send(`${f.origin.url}/v1/loans/${lent.id}`, 'DELETE', writer);
    assert.ok((await search(true)).includes(other.book));
  });

  test('refusals: scope, unknown ids, a branch without a copy, bodies that are not a loan', async () => {
    assert.ok(single !== undefined);
    const reader = { authorization: `Bearer ${await f.token()}` };
    const refused = await lend(single, reader);
    assert.equal(refused.status, 403);
    assert.match(String(refused.headers['www-authenticate']), /insufficient_scope/);
    assert.equal((await lend(single, {})).status, 401);
    assert.equal((await lend({ book: 'bk_999999', branch: single.branch })).status, 404);
    assert.equal((await lend({ book: single.book, branch: 'branch_nowhere' })).status, 404);
    const db = new DatabaseSync(sharedCatalog(), { readOnly: true });
    const unheld = db
      .prepare('SELECT id FROM branch WHERE id NOT IN (SELECT branch_id FROM holding WHERE book_id = ?) LIMIT 1')
      .get(Number(single.book.slice(3)));
    db.close();
    const notHeld = await lend({ book: single.book, branch: unheld?.id as string });
    assert.equal(notHeld.status, 422);
    assert.equal(json(notHeld).type, 'https://catalog.example/problems/invalid-body');
    assert.equal((await lend({ book: 42, branch: single.branch } as unknown as Holding)).status, 422);
    assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', writer, '{"book":')).status, 422);
    assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', { ...writer, 'content-type': 'text/plain' }, 'book=bk_1')).status, 415);
    assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', writer, { pad: 'x'.repeat(20_000) })).status, 413);
    const wrongMethod = await send(`${f.origin.url}/v1/loans`, 'GET', writer);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.allow, 'POST');
    assert.equal((await send(`${f.origin.url}/v1/loans/ln_0`, 'DELETE', writer)).status, 404);
  });

  test('a body member the operation does not define is refused, not dropped', async () => {
    assert.ok(single !== undefined);
    const loan = await lend({ ...single, until: '2030-01-01' } as Holding);
    assert.equal(loan.status, 422, loan.body);
    assert.match(String(json(loan).detail), /unknown member "until"/);
    const admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
    const registration = await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, {
      url: 'https://receiver.example/events',
      type: ['book.availability.changed'],
    });
    assert.equal(registration.status, 422, registration.body);
    assert.match(String(json(registration).detail), /unknown member "type"/);
    assert.deepEqual(json(await send(`${f.origin.url}/v1/webhooks`, 'GET', admin)), { results: [] }, 'nothing was registered');
  });

  test('concurrent loans of the last copy: exactly one is made, the others get 409', async () => {
    assert.ok(contested !== undefined);
    const replies = await Promise.all(Array.from({ length: 8 }, () => lend(contested)));
    assert.deepEqual(replies.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    const refusal = replies.find((r) => r.status === 409);
    assert.ok(refusal !== undefined);
    assert.equal(refusal.headers['content-type'], 'application/problem+json');
    assert.equal(json(refusal).type, 'https://catalog.example/problems/no-copy-free');
  });

  test('query parameters on loans and webhooks are refused, not ignored', async () => {
    assert.ok(kept !== undefined);
    const loan = json<{ id: string }>(await lend(kept));
    const url = `${f.origin.url}/v1/loans/${loan.id}`;
    const refused = await send(`${url}?dryRun=true`, 'DELETE', writer);
    assert.equal(refused.status, 400, refused.body);
    assert.equal(json(refused).type, 'https://catalog.example/problems/unknown-parameter');
    assert.equal((await send(url, 'GET', writer)).status, 200, 'the loan is still active');
    assert.equal((await send(`${f.origin.url}/v1/loans?copies=2`, 'POST', writer, kept)).status, 400);
    const admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
    assert.equal((await send(`${f.origin.url}/v1/webhooks?page=2`, 'GET', admin)).status, 400);
    assert.equal((await send(`${f.origin.url}/v1/loans?copies=2`, 'POST', {}, kept)).status, 401, 'parameters are judged after the token');
    assert.equal((await send(url, 'DELETE', writer)).status, 204);
  });

  test('a body left unread (refused, or too large) closes the connection instead of being read to its end', async () => {
    for (const [headers, status] of [
      [writer, 413],
      [{}, 401],
    ] as const) {
      const streamed = await streamEndlessBody(f.origin.url, '/v1/loans', headers);
      assert.match(streamed.head, new RegExp(`^HTTP/1.1 ${status} `), streamed.head);
      assert.match(streamed.head, /\r\nconnection: close\r\n/i, streamed.head);
      assert.ok(streamed.closed, `the connection was still open after ${streamed.sentBytes} bytes`);
    }
  });
});

describe('tags', () => {
  let f: OriginFixture;
  before(async () => {
    f = await startOriginFixture();
  });
  after(() => f.stop());

  test('every cacheable answer names the books it shows in Surrogate-Key', async () => {
    const search = await f.get('/v1/books?q=the&limit=5');
    const ids = json<{ results: Book[] }>(search).results.map((b) => b.id);
    assert.equal(search.headers['surrogate-key'], ids.join(' '));
    const anyBranch = await f.get('/v1/books?q=the&limit=3&available=true');
    assert.match(String(anyBranch.headers['surrogate-key']), / avail_any$/);
    assert.equal((await f.get('/v1/books/bk_7')).headers['surrogate-key'], 'bk_7');
    assert.equal((await f.get('/v1/branches')).headers['surrogate-key'], undefined);
  });
});

describe('events', () => {
  let f: OriginFixture;
  let receiver: WebhookReceiver;
  let admin: Record<string, string>;
  let writer: Record<string, string>;
  const holdings = freeHoldings(1, 12).slice(4);

  before(async () => {
    receiver = await startWebhookReceiver();
    f = await startOriginFixture();
    admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
    writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
  });
  after(async () => {
    await f.stop();
    await receiver.close();
  });

  test('registration needs catalog:admin, shows the secret once, and can be listed and removed', async () => {
    assert.equal((await send(`${f.origin.url}/v1/webhooks`, 'POST', writer, { url: receiver.url })).status, 403);
    assert.equal((await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: 'ftp://x' })).status, 422);
    assert.equal((await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: receiver.url, types: ['book.deleted'] })).status, 422);
    const created = await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: 'https://example.invalid/hook', types: ['book.availability.changed'] });
    assert.equal(created.status, 201);
    const hook = json<{ id: string; secret: string; url: string }>(created);
    assert.match(hook.secret, /^whsec_/);
    assert.equal(created.headers.location, `/v1/webhooks/${hook.id}`);
    const listed = json<{ results: Record<string, unknown>[] }>(await send(`${f.origin.url}/v1/webhooks`, 'GET', admin));
    assert.deepEqual(listed.results, [{ id: hook.id, url: hook.url, types: ['book.availability.changed'], state: 'enabled' }]);
    assert.equal((await send(`${f.origin.url}/v1/webhooks/${hook.id}`, 'DELETE', admin)).status, 204);
    assert.equal((await send(`${f.origin.url}/v1/webhooks/${hook.id}`, 'GET', admin)).status, 404);
  });

  test('a flip is delivered signed, once per change, in order per book, and retried until the receiver takes it', async () => {
    const [a, b] = holdings;
    assert.ok(a !== undefined && b !== undefined);
    const hook = json<{ id: string; secret: string }>(await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: receiver.url }));
    receiver.script(500, 503);
    const loanA = json<{ id: string }>(await send(`${f.origin.url}/v1/loans`, 'POST', writer, a));
    await send(`${f.origin.url}/v1/loans/${loanA.id}`, 'DELETE', writer);
    await send(`${f.origin.url}/v1/loans`, 'POST', writer, b);
    await until(async () => {
      f.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return receiver.received.filter((r) => r.status === 204).length >= 3;
    }, 10_000);
    const verifier = new Webhook(hook.secret);
    const delivered = receiver.received
      .filter((r) => r.status === 204)
      .map((r) => verifier.verify(r.body, r.headers as Record<string, string>) as { type: string; data: { book: string; branch: string; available: boolean } });
    const ofA = delivered.filter((e) => e.data.book === a.book).map((e) => e.data.available);
    assert.deepEqual(ofA, [false, true], 'the loan, then the return');
    assert.deepEqual(delivered.find((e) => e.data.book === b.book)?.data, { book: b.book, branch: b.branch, available: false });
    assert.ok(delivered.every((e) => e.type === 'book.availability.changed'));
    const deliveredIds = receiver.received.filter((r) => r.status === 204).map((r) => r.headers['webhook-id']);
    for (const failed of receiver.received.filter((r) => r.status >= 500))
      assert.ok(deliveredIds.includes(failed.headers['webhook-id']), 'a retry carries the id of the failed attempt');
    const metrics = await f.metrics();
    assert.equal(metricValue(metrics, 'catalog_origin_event_deliveries_total', { outcome: 'failed' }), 2);
    assert.equal(metricValue(metrics, 'catalog_origin_event_deliveries_total', { outcome: 'delivered' }), 3);
    assert.equal(metricValue(metrics, 'catalog_origin_outbox_depth'), 0);
    // The outbox is empty now: the next event must not reuse an id a receiver has already seen.
    const seen = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    await send(`${f.origin.url}/v1/loans/${json<{ id: string }>(await send(`${f.origin.url}/v1/loans`, 'POST', writer, a)).id}`, 'DELETE', writer);
    await until(async () => metricValue(await f.metrics(), 'catalog_origin_event_deliveries_total', { outcome: 'delivered' }) >= 5);
    const later = receiver.received.slice(-2).map((r) => r.headers['webhook-id']);
    assert.equal(new Set(later).size, 2);
    for (const id of later) assert.ok(!seen.has(id), `webhook-id ${String(id)} was used before`);
    await send(`${f.origin.url}/v1/webhooks/${hook.id}`, 'DELETE', admin);
  });

  test('events committed while the receiver is down, and across an origin restart, are delivered afterwards', async () => {
    const [c] = holdings.slice(2);
    assert.ok(c !== undefined);
    const down = await startWebhookReceiver();
    const port = Number(new URL(down.url).port);
    await down.close();
    const hook = json<{ secret: string }>(await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: down.url }));
    assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', writer, c)).status, 201);
    await until(async () => {
      f.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return metricValue(await f.metrics(), 'catalog_origin_event_deliveries_total', { outcome: 'failed' }) >= 3;
    }, 4_000);
    await f.stop();
    const back = await startWebhookReceiver(port);
    const restarted = await startOriginFixture({ 'origin.db': f.config['origin.db'], dataDir: f.config.dataDir });
    try {
      await until(async () => {
        restarted.clock.advance(5000);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return back.received.length > 0;
      }, 10_000);
      const event = new Webhook(hook.secret).verify(back.received[0]?.body ?? '', back.received[0]?.headers as Record<string, string>) as { data: unknown };
      assert.deepEqual(event.data, { book: c.book, branch: c.branch, available: false });
    } finally {
      await restarted.stop();
      await back.close();
    }
    f = await startOriginFixture();
  });
});
