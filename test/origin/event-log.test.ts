/**
 * The origin's event log (`GET /v1/events`): every availability event, registrations or not, in
 * order, under the id and body its deliveries carry; pruned to `origin.events.logSize`; a cursor
 * it no longer reaches is a 410; a catalog built before the log gains it.
 */
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../support/config.ts';
import { send, until, type Reply } from '../support/harness.ts';
import { freeHoldings, json, sharedCatalog, startOriginFixture, type Holding, type OriginFixture } from '../support/origin-fixture.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

interface LogPage {
  readonly events: { seq: number; id: string; type: string; timestamp: string; data: { book: string; branch: string; available: boolean } }[];
  readonly last: number;
}

/** A catalog of its own, copied before any origin opens the shared one. */
function ownCatalog(): string {
  const path = join(tempDir(), 'catalog.db');
  copyFileSync(sharedCatalog(), path);
  return path;
}

const holdings = freeHoldings(1, 12);
const holding = (i: number): Holding => {
  const h = holdings[i];
  assert.ok(h !== undefined, 'enough free holdings');
  return h;
};

async function client(f: OriginFixture) {
  const admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
  const writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
  return {
    admin,
    events: (query = ''): Promise<Reply> => send(`${f.origin.url}/v1/events${query}`, 'GET', admin),
    last: async (): Promise<number> => json<LogPage>(await send(`${f.origin.url}/v1/events`, 'GET', admin)).last,
    lend: async (h: Holding): Promise<string> => {
      const lent = await send(`${f.origin.url}/v1/loans`, 'POST', writer, h);
      assert.equal(lent.status, 201, lent.body);
      return String(lent.headers.location);
    },
    giveBack: async (location: string): Promise<void> => {
      assert.equal((await send(`${f.origin.url}${location}`, 'DELETE', writer)).status, 204);
    },
  };
}

describe('GET /v1/events', () => {
  const pruned = ownCatalog();
  const legacy = ownCatalog();
  let f: OriginFixture;
  let c: Awaited<ReturnType<typeof client>>;

  before(async () => {
    f = await startOriginFixture();
    c = await client(f);
  });
  after(() => f.stop());

  test('without a webhook registered, every loan and return that flips availability is logged, in order', async () => {
    const start = await c.last();
    const first = await c.lend(holding(0));
    await c.lend(holding(1));
    await c.giveBack(first);
    const reply = await c.events(`?after=${start}`);
    assert.equal(reply.status, 200, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const page = json<LogPage>(reply);
    assert.deepEqual(
      page.events.map((e) => e.seq),
      [start + 1, start + 2, start + 3],
    );
    assert.equal(page.last, start + 3);
    assert.deepEqual(
      page.events.map((e) => ({ ...e.data })),
      [
        { ...holding(0), available: false },
        { ...holding(1), available: false },
        { ...holding(0), available: true },
      ],
    );
    for (const event of page.events) {
      assert.match(event.id, /^msg_[0-9a-f-]{36}$/);
      assert.equal(event.type, 'book.availability.changed');
      assert.ok(!Number.isNaN(Date.parse(event.timestamp)));
    }
    assert.equal(new Set(page.events.map((e) => e.id)).size, 3, 'one id per event');
  });

  test('without after, only where the log stands; limit pages through it', async () => {
    const start = await c.last();
    const loans = [await c.lend(holding(2)), await c.lend(holding(3)), await c.lend(holding(4))];
    const bare = json<LogPage>(await c.events());
    assert.deepEqual(bare, { events: [], last: start + 3 });
    const firstPage = json<LogPage>(await c.events(`?after=${start}&limit=2`));
    assert.deepEqual(
      firstPage.events.map((e) => e.seq),
      [start + 1, start + 2],
    );
    const secondPage = json<LogPage>(await c.events(`?limit=2&after=${start + 2}`));
    assert.deepEqual(
      secondPage.events.map((e) => e.seq),
      [start + 3],
    );
    assert.deepEqual(json<LogPage>(await c.events(`?after=${start + 3}`)), { events: [], last: start + 3 }, 'a cursor at the end: nothing new');
    for (const loan of loans) await c.giveBack(loan);
  });

  test('a delivered event carries the id and body the log keeps', async () => {
    const receiver = await startWebhookReceiver();
    const registered = await send(`${f.origin.url}/v1/webhooks`, 'POST', c.admin, { url: receiver.url });
    assert.equal(registered.status, 201);
    try {
      const start = await c.last();
      await c.lend(holding(5));
      await until(() => Promise.resolve(receiver.received.length === 1));
      const delivered = receiver.received[0];
      const [logged] = json<LogPage>(await c.events(`?after=${start}`)).events;
      assert.ok(delivered !== undefined && logged !== undefined);
      assert.equal(delivered.headers['webhook-id'], logged.id);
      assert.equal(logged.seq, start + 1);
      assert.deepEqual(
        JSON.parse(delivered.body),
        { type: logged.type, timestamp: logged.timestamp, data: logged.data },
        'the body delivered is the one logged',
      );
    } finally {
      await send(`${f.origin.url}${String(registered.headers.location)}`, 'DELETE', c.admin);
      await receiver.close();
    }
  });

  test('the log needs catalog:admin, and refuses bad parameters with 400', async () => {
    const reader = { authorization: `Bearer ${await f.token({ scope: 'catalog:read catalog:write' })}` };
    assert.equal((await send(`${f.origin.url}/v1/events`, 'GET', reader)).status, 403);
    assert.equal((await send(`${f.origin.url}/v1/events`, 'GET', {})).status, 401);
    assert.equal((await send(`${f.origin.url}/v1/events`, 'POST', c.admin, {})).status, 405);
    const cases: [string, string][] = [
      ['?after=-1', 'invalid-parameter'],
      ['?after=abc', 'invalid-parameter'],
      ['?after=01', 'invalid-parameter'],
      ['?after=', 'invalid-parameter'],
      ['?after=1e3', 'invalid-parameter'],
      ['?after=1&after=2', 'invalid-parameter'],
      ['?after=0&limit=0', 'invalid-parameter'],
      ['?after=0&limit=1001', 'invalid-parameter'],
      ['?after=0&limit=x', 'invalid-parameter'],
      ['?after=0&since=4', 'unknown-parameter'],
    ];
    for (const [query, kind] of cases) {
      const reply = await c.events(query);
      assert.equal(reply.status, 400, query);
      assert.equal(reply.headers['content-type'], 'application/problem+json');
      assert.equal((JSON.parse(reply.body) as { type: string }).type, `https://catalog.example/problems/${kind}`, query);
    }
    assert.equal((await c.events('?after=0&limit=1000')).status, 200, 'limit 1000 is allowed');
    assert.equal((await send(`${f.origin.url}/v1/events?after=0`, 'HEAD', c.admin)).body, '');
  });

  test('pruned to origin.events.logSize: a cursor before the kept events, or past the last, is a 410', async () => {
    const small = await startOriginFixture({ 'origin.db': pruned, 'origin.events.logSize': 3 });
    try {
      const s = await client(small);
      const start = await s.last();
      const loans: string[] = [];
      for (let i = 6; i < 11; i++) loans.push(await s.lend(holding(i)));
      const last = start + 5;
      const kept = json<LogPage>(await s.events(`?after=${last - 3}`));
      assert.deepEqual(
        kept.events.map((e) => e.seq),
        [last - 2, last - 1, last],
        'the newest 3 are kept',
      );
      const gone = await s.events(`?after=${last - 4}`);
      assert.equal(gone.status, 410, gone.body);
      assert.equal(gone.headers['content-type'], 'application/problem+json');
      assert.equal(gone.headers['cache-control'], 'no-store');
      const problem = JSON.parse(gone.body) as { type: string; status: number; detail: string };
      assert.equal(problem.type, 'https://catalog.example/problems/events-expired');
      assert.match(problem.detail, new RegExp(`keeps events ${last - 2} to ${last}`));
      assert.equal((await s.events(`?after=${last + 1}`)).status, 410, "a cursor past the last is another log's");
      assert.equal((await s.events(`?after=${last}`)).status, 200);
      const rows = new DatabaseSync(pruned, { readOnly: true });
      assert.equal(rows.prepare('SELECT count(*) AS n FROM event_log').get()?.n, 3, "pruned in the loans' transactions");
      rows.close();
      for (const loan of loans) await s.giveBack(loan);
    } finally {
      await small.stop();
    }
  });

  test('a catalog built before the event log gains it at start, and logs from then on', async () => {
    const db = new DatabaseSync(legacy);
    db.exec('DROP TABLE event_log');
    db.close();
    const old = await startOriginFixture({ 'origin.db': legacy });
    try {
      const o = await client(old);
      assert.deepEqual(json<LogPage>(await o.events()), { events: [], last: 0 });
      assert.equal((await o.events('?after=1')).status, 410, 'an empty log has no event 1');
      await o.lend(holding(11));
      const page = json<LogPage>(await o.events('?after=0'));
      assert.deepEqual(
        page.events.map((e) => [e.seq, e.data.book]),
        [[1, holding(11).book]],
      );
    } finally {
      await old.stop();
    }
  });
});
