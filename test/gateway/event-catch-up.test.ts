/**
 * The replay of the origin's event log (src/gateway/events/catch-up.ts) against a real origin on
 * loopback, into a real Purger and cache: loans made while the gateway was away purge what they
 * concern, once even when a webhook brings them too; a log that no longer reaches the cursor is a
 * gap; an origin that refuses, hangs or fails is unreachable, within the timeout; the poll reports
 * the cursor as it advances.
 */
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { CatchUpMetrics } from '../../src/gateway/events/catch-up-metrics.ts';
import { EventCatchUp, type CatchUpOutcome, type EventCatchUpOptions } from '../../src/gateway/events/catch-up.ts';
import { GatewayMetrics } from '../../src/gateway/metrics.ts';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { Purger } from '../../src/gateway/purge/purger.ts';
import { isFresh } from '../../src/gateway/rules/freshness.ts';
import { cacheKey, ResponseCache } from '../../src/gateway/store/memory/response-cache.ts';
import { Tiers } from '../../src/gateway/store/tiers.ts';
import { EntryMaker } from '../../src/gateway/store/stored-response.ts';
import { parseTags } from '../../src/gateway/store/tag-index.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { tempDir } from '../support/config.ts';
import { holdsWithin, metricValue, send, until } from '../support/harness.ts';
import { freeHoldings, json, sharedCatalog, startOriginFixture, type Holding, type OriginFixture } from '../support/origin-fixture.ts';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { startScriptedOrigin } from '../support/scripted-origin.ts';
import { freshFacts } from '../support/entry-facts.ts';

const codec = new Codec({ gzip: 6, br: 5, zstd: 3 });
const maker = new EntryMaker(codec);
const silent = pino({ level: 'silent' });

/** A cache behind a real Purger, with an hour-long entry per path under the tags given. */
function cacheWith(entries: Record<string, string>) {
  const log = new PurgeLog();
  const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: log, admission: false, codec });
  const registry = new Registry();
  const metrics = new GatewayMetrics(
    registry,
    {
      cache: () => ({ entries: 0, bytes: 0, evictions: 0, admitted: 0, refused: 0, shifts: 0, windowShare: 0.01 }),
      inFlight: () => 0,
      fillWaiting: () => 0,
      originUp: () => true,
      originConnections: () => ({ open: 0, waiting: 0 }),
    },
    { gcDurations: false },
  );
  const purger = new Purger({ tiers: new Tiers(cache, undefined, log), log, metrics, logger: silent, now: Date.now });
  const store = (path: string, tags: string): void => {
    const facts = freshFacts(3_600_000, Date.now());
    const response = maker.prepare(
      200,
      { 'content-type': 'application/json' },
      Buffer.from('{}'),
      { keep: 'identity', offered: [] },
      facts,
      undefined,
      [],
      parseTags(tags),
    );
    assert.equal(cache.put(cacheKey(path), response, { generation: log.generation, mark: log.mark }), undefined, path);
  };
  for (const [path, tags] of Object.entries(entries)) store(path, tags);
  const lookup = (path: string) => cache.lookup(cacheKey(path), {});
  return { purger, registry, replays: new CatchUpMetrics(registry), store, has: (path: string): boolean => lookup(path).kind === 'found', lookup };
}

function catchUpOf(
  origin: string,
  token: () => Promise<string>,
  parts: { purger: Purger; replays: CatchUpMetrics },
  more: Partial<EventCatchUpOptions> = {},
): EventCatchUp {
  return new EventCatchUp({ origin, token, purger: parts.purger, soft: false, metrics: parts.replays, logger: silent, now: Date.now, ...more });
}

function cursorOf(outcome: CatchUpOutcome): number {
  assert.ok(outcome.kind !== 'unreachable', 'the log was read');
  return outcome.cursor;
}

const holdings = freeHoldings(1, 17);
const holding = (i: number): Holding => {
  const h = holdings[i];
  assert.ok(h !== undefined, 'enough free holdings');
  return h;
};

describe("catching up with the origin's event log", () => {
  let f: OriginFixture;
  let writer: Record<string, string>;
  const admin = (): Promise<string> => f.token({ scope: 'catalog:admin' });
  const lend = async (h: Holding): Promise<string> => {
    const lent = await send(`${f.origin.url}/v1/loans`, 'POST', writer, h);
    assert.equal(lent.status, 201, lent.body);
    return String(lent.headers.location);
  };
  const giveBack = async (location: string): Promise<void> => {
    assert.equal((await send(`${f.origin.url}${location}`, 'DELETE', writer)).status, 204);
  };

  before(async () => {
    f = await startOriginFixture();
    writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
  });
  after(() => f.stop());

  test('loans made while away purge the tags each concerns, and the cursor moves to the last event', async () => {
    const [a, b, c] = [holding(0), holding(1), holding(2)];
    const gw = cacheWith({
      '/a': a.book,
      '/b': `${b.book} bk_999999`,
      '/c': c.book,
      '/avail-a': `avail_${a.branch}`,
      '/avail-any': 'avail_any',
      '/avail-nowhere': 'avail_branch_nowhere',
    });
    const replay = catchUpOf(f.origin.url, admin, gw);
    const start = cursorOf(await replay.catchUp(undefined));
    assert.equal(
      start,
      json<{ last: number }>(await send(`${f.origin.url}/v1/events`, 'GET', { authorization: `Bearer ${await admin()}` })).last,
      'without a cursor, where the log stands',
    );
    assert.ok(gw.has('/a'), 'learning where the log stands purges nothing');

    const loan = await lend(a);
    await lend(b);
    await giveBack(loan);
    const outcome = await replay.catchUp(start);
    assert.deepEqual(outcome, { kind: 'caught-up', cursor: start + 3 });
    for (const path of ['/a', '/b', '/avail-a', '/avail-any']) assert.ok(!gw.has(path), `${path} purged`);
    for (const path of ['/c', '/avail-nowhere']) assert.ok(gw.has(path), `${path} kept`);
    const scrape = await gw.registry.metrics();
    assert.equal(metricValue(scrape, 'catalog_gateway_events_replayed_total'), 3);
    assert.equal(metricValue(scrape, 'catalog_gateway_event_catchups_total', { outcome: 'caught-up' }), 2);
    assert.equal(metricValue(scrape, 'catalog_gateway_purges_total', { kind: 'tags', mode: 'hard' }), 3);

    assert.deepEqual(await replay.catchUp(start + 3), { kind: 'caught-up', cursor: start + 3 }, 'nothing new: the cursor stays');
  });

  test('an event replayed and delivered by webhook too, or replayed twice, purges once', async () => {
    const d = holding(3);
    const gw = cacheWith({ '/d': d.book });
    const replay = catchUpOf(f.origin.url, admin, gw);
    const start = cursorOf(await replay.catchUp(undefined));
    await lend(d);
    const [event] = json<{ events: { id: string }[] }>(
      await send(`${f.origin.url}/v1/events?after=${start}`, 'GET', { authorization: `Bearer ${await admin()}` }),
    ).events;
    assert.ok(event !== undefined);
    // The webhook's delivery first, as the receiver applies it: under the same id.
    assert.equal(await gw.purger.purge({ kind: 'tags', tags: [d.book] }, false, { kind: 'event', id: event.id }), 1);
    gw.store('/d', d.book);
    assert.deepEqual(await replay.catchUp(start), { kind: 'caught-up', cursor: start + 1 });
    assert.ok(gw.has('/d'), 'the replay of a delivered event purges nothing');
    const scrape = await gw.registry.metrics();
    assert.equal(metricValue(scrape, 'catalog_gateway_event_purges_total', { source: 'delivery', result: 'repeat' }), 1);
  });

  test('soft (gateway.events.softPurge): the entries are kept, stale', async () => {
    const e = holding(4);
    const gw = cacheWith({ '/e': e.book });
    const replay = catchUpOf(f.origin.url, admin, gw, { soft: true });
    const start = cursorOf(await replay.catchUp(undefined));
    await lend(e);
    assert.equal(cursorOf(await replay.catchUp(start)), start + 1);
    const found = gw.lookup('/e');
    assert.ok(found.kind === 'found', 'still stored');
    assert.equal(isFresh(found.response, Date.now()), false, 'but stale');
  });

  test('pages through the log until it reaches the last event', async () => {
    const gw = cacheWith({});
    const replay = catchUpOf(f.origin.url, admin, gw, { pageSize: 2 });
    const start = cursorOf(await replay.catchUp(undefined));
    for (let i = 5; i < 10; i++) await lend(holding(i));
    const gets = f.logs.lines().filter((l) => String(l.path).startsWith('/v1/events?')).length;
    assert.deepEqual(await replay.catchUp(start), { kind: 'caught-up', cursor: start + 5 });
    assert.equal(f.logs.lines().filter((l) => String(l.path).startsWith('/v1/events?')).length - gets, 3, 'pages of 2, 2 and 1');
    assert.equal(metricValue(await gw.registry.metrics(), 'catalog_gateway_events_replayed_total'), 5);
  });

  test('the gateway passes the log through to clients with catalog:admin, never stored', async () => {
    const gateway = await startGatewayFixture(f.origin, { dataDir: f.config.dataDir });
    try {
      const admin = { authorization: `Bearer ${await gateway.token('catalog:admin')}` };
      const start = json<{ last: number }>(await gateway.get('/v1/events', admin)).last;
      await lend(holding(16));
      const reply = await gateway.get(`/v1/events?after=${start}`, admin);
      assert.equal(reply.status, 200, reply.body);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.deepEqual(
        json<{ events: { seq: number }[] }>(reply).events.map((e) => e.seq),
        [start + 1],
        'not a stored answer from before the loan',
      );
      assert.equal((await gateway.get('/v1/events')).status, 403, 'catalog:read is not enough');
    } finally {
      await gateway.stop();
    }
  });

  test('the poll reports the cursor as it advances, purging as it goes, until stopped', async () => {
    const g = holding(10);
    const gw = cacheWith({ '/g': g.book });
    const replay = catchUpOf(f.origin.url, admin, gw);
    const start = cursorOf(await replay.catchUp(undefined));
    const reported: [number, string][] = [];
    replay.start(start, (cursor, outcome) => reported.push([cursor, outcome]), 20);
    try {
      await lend(g);
      await until(() => Promise.resolve(reported.length > 0));
      assert.deepEqual(reported, [[start + 1, 'caught-up']]);
      assert.ok(!gw.has('/g'));
    } finally {
      await replay.stop();
    }
    const seen = reported.length;
    await lend(holding(11));
    const polls = f.logs.lines().filter((l) => String(l.path).startsWith('/v1/events?')).length;
    // Ten poll intervals: a poll still scheduled would have asked by then.
    const polled = await holdsWithin(200, () => Promise.resolve(f.logs.lines().filter((l) => String(l.path).startsWith('/v1/events?')).length > polls));
    assert.equal(polled, false, 'no poll after stop');
    assert.equal(reported.length, seen);
  });
});

describe('gaps and an unreachable log', () => {
  const catalog = join(tempDir(), 'catalog.db');
  copyFileSync(sharedCatalog(), catalog);
  let f: OriginFixture;

  before(async () => {
    f = await startOriginFixture({ 'origin.db': catalog, 'origin.events.logSize': 2 });
  });
  after(() => f.stop());

  test('a log pruned past the cursor, or of another database, is a gap: the cursor goes on from its last event', async () => {
    const writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
    const gw = cacheWith({ '/h': holding(12).book });
    const replay = catchUpOf(f.origin.url, () => f.token({ scope: 'catalog:admin' }), gw);
    const start = cursorOf(await replay.catchUp(undefined));
    for (let i = 12; i < 16; i++) assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', writer, holding(i))).status, 201);
    assert.deepEqual(await replay.catchUp(start), { kind: 'gap', cursor: start + 4 });
    assert.ok(gw.has('/h'), 'a gap purges nothing itself: the caller revalidates');
    assert.deepEqual(await replay.catchUp(start + 2), { kind: 'caught-up', cursor: start + 4 }, 'the oldest kept less one is still reached');
    assert.deepEqual(await replay.catchUp(start + 1000), { kind: 'gap', cursor: start + 4 }, 'a cursor past the last');
    assert.equal(metricValue(await gw.registry.metrics(), 'catalog_gateway_event_catchups_total', { outcome: 'gap' }), 2);
  });

  test('an origin that refuses connections, fails, refuses the token or hangs is unreachable, within the timeout', async () => {
    const gw = cacheWith({});
    const token = (): Promise<string> => f.token({ scope: 'catalog:admin' });
    const stub = await startScriptedOrigin((req, res) => {
      res.statusCode = req.target.includes('after=1') ? 503 : 200;
      res.end(req.target.includes('after=2') ? '{"events":[{"seq":1,"id":"msg_x","type":"book.availability.changed"}],"last":1}' : '{}');
    });
    const hanging = await startScriptedOrigin(() => undefined);
    try {
      await stub.stop();
      assert.deepEqual(await catchUpOf(stub.url, token, gw).catchUp(0), { kind: 'unreachable' }, 'connection refused');
      await stub.start();
      assert.deepEqual(await catchUpOf(stub.url, token, gw).catchUp(1), { kind: 'unreachable' }, '503');
      assert.deepEqual(await catchUpOf(stub.url, token, gw).catchUp(2), { kind: 'unreachable' }, 'an answer that is not the log');
      assert.deepEqual(await catchUpOf(stub.url, token, gw).catchUp(3), { kind: 'unreachable' }, 'a page without events');
      const reader = (): Promise<string> => f.token({ scope: 'catalog:read' });
      assert.deepEqual(await catchUpOf(f.origin.url, reader, gw).catchUp(0), { kind: 'unreachable' }, 'a token without catalog:admin: 403');
      const started = performance.now();
      assert.deepEqual(await catchUpOf(hanging.url, token, gw, { timeoutMs: 300 }).catchUp(0), { kind: 'unreachable' }, 'no answer');
      const waited = performance.now() - started;
      assert.ok(waited >= 250 && waited < 3000, `gave up after ${Math.round(waited)} ms`);
      assert.equal(metricValue(await gw.registry.metrics(), 'catalog_gateway_event_catchups_total', { outcome: 'unreachable' }), 6);
    } finally {
      await stub.close();
      await hanging.close();
    }
  });
});
