import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PROTOCOLS, protocolOverrides } from '../support/protocols.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, send, until, type Reply } from '../support/harness.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

/** An origin whose answers carry the tags a test gives per path, and a strong ETag. */
function tagged(
  tags: Map<string, string>,
): (req: { target: string; headers: Record<string, string | string[] | undefined> }, res: import('node:http').ServerResponse) => void {
  return (req, res) => {
    const path = req.target.split('?')[0] ?? '/';
    const etag = `"v-${path.length}"`;
    res.setHeader('cache-control', 'public, max-age=3600');
    res.setHeader('etag', etag);
    res.setHeader('surrogate-key', tags.get(path) ?? 'untagged');
    if (req.headers['if-none-match'] === etag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path }));
  };
}

const HTTP_ROUTE = [{ prefix: '/', mode: 'http', auth: 'off' }];

for (const protocol of PROTOCOLS)
  describe(`purge API, over ${protocol}`, () => {
    let origin: ScriptedOrigin;
    let fx: GatewayFixture;
    let admin: Record<string, string>;
    const tags = new Map([
      ['/a', 'bk_1 bk_2'],
      ['/b', 'bk_2'],
      ['/c', 'bk_3'],
      ['/v/d', 'bk_4'],
    ]);

    before(async () => {
      origin = await startScriptedOrigin(tagged(tags));
      fx = await startGatewayFixture(origin.url, { ...protocolOverrides(protocol), 'gateway.routes': HTTP_ROUTE });
      admin = { authorization: `Bearer ${await fx.token('catalog:admin')}` };
    });
    after(async () => {
      await fx.stop();
      await origin.close();
    });

    const purge = (body: unknown, headers = admin): Promise<Reply> => send(`${fx.gateway.adminUrl}/purge`, 'POST', headers, body);
    const warm = async (...paths: string[]): Promise<void> => {
      for (const path of paths) await fx.get(path);
      for (const path of paths) assert.match(String((await fx.get(path)).headers['cache-status']), /; hit/, path);
    };
    const status = async (path: string): Promise<string> => String((await fx.get(path)).headers['cache-status']);

    test('the tag field is not passed on to clients, stored or relayed', async () => {
      const reply = await fx.get('/a');
      assert.equal(reply.headers['surrogate-key'], undefined);
      const relayed = await fx.get('/a', {}, 'POST');
      assert.match(String(relayed.headers['cache-status']), /fwd=method/);
      assert.equal(relayed.headers['surrogate-key'], undefined);
    });

    test('a purge needs a catalog:admin token and a well-formed body, and a refused one purges nothing', async () => {
      await warm('/a');
      assert.equal((await purge({ all: true }, {})).status, 401);
      const forbidden = await purge({ all: true }, { authorization: `Bearer ${await fx.token()}` });
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.headers['content-type'], 'application/problem+json');
      // A misspelt member is refused, not dropped: `sfot` would make a soft purge of everything a hard one.
      for (const body of [
        {},
        { tags: [] },
        { tags: 'bk_1' },
        { all: false },
        { prefix: 'v' },
        { urls: ['http://'] },
        { urls: ['https://[::1/a'] },
        { urls: ['a'] },
        { tags: ['bk_1'], all: true },
        { all: true, soft: 'yes' },
        { all: true, sfot: true },
        { tag: ['bk_1'], all: true },
        '[]',
        'nope',
      ]) {
        const reply = await purge(body);
        assert.equal(reply.status, 422, JSON.stringify(body));
      }
      assert.equal((await send(`${fx.gateway.adminUrl}/purge`, 'POST', { ...admin, 'content-type': 'text/plain' }, 'all')).status, 415);
      assert.equal((await send(`${fx.gateway.adminUrl}/purge`, 'GET', admin)).status, 405);
      assert.match(await status('/a'), /; hit/);
    });

    test('by tag: every entry carrying one of the tags, and no other', async () => {
      await warm('/a', '/b', '/c');
      const reply = await purge({ tags: ['bk_2'] });
      assert.equal(reply.status, 200);
      assert.deepEqual(JSON.parse(reply.body), { purged: 2 });
      assert.match(await status('/a'), /fwd=miss/);
      assert.match(await status('/b'), /fwd=miss/);
      assert.match(await status('/c'), /; hit/);
      const metrics = await fx.metrics();
      assert.equal(metricValue(metrics, 'catalog_gateway_purges_total', { kind: 'tags', mode: 'hard' }), 1);
      assert.ok(metricValue(metrics, 'catalog_gateway_purged_entries_total') >= 2);
      // One log line per purge, as an operator from Varnish looks for: selector, mode, entries, who.
      const lines = fx.logs.lines().filter((l) => l.msg === 'purge');
      assert.deepEqual(
        lines.map(({ purge: selector, mode, purged, sub }) => ({ selector, mode, purged, sub })),
        [{ selector: { kind: 'tags', tags: ['bk_2'] }, mode: 'hard', purged: 2, sub: 'tester' }],
      );
    });

    test('by URL (absolute or not), by prefix, and everything', async () => {
      await warm('/a', '/b', '/c', '/v/d');
      assert.deepEqual(JSON.parse((await purge({ urls: [`${fx.gateway.url}/a`, '/nothing'] })).body), { purged: 1 });
      // A URL longer than any target the gateway stores names no entry, and the purge log line does not carry it.
      assert.deepEqual(JSON.parse((await purge({ urls: [`/b?${'x'.repeat(100_000)}`] })).body), { purged: 0 });
      assert.ok(!fx.logs.text().includes('x'.repeat(3000)));
      assert.match(await status('/a'), /fwd=miss/);
      assert.deepEqual(JSON.parse((await purge({ prefix: '/v/' })).body), { purged: 1 });
      assert.match(await status('/v/d'), /fwd=miss/);
      assert.match(await status('/b'), /; hit/);
      const all = JSON.parse((await purge({ all: true })).body) as { purged: number };
      assert.ok(all.purged >= 3);
      assert.match(await status('/c'), /fwd=miss/);
    });

    test('soft: the entry stays, stale, and is revalidated (304) on next use', async () => {
      await warm('/c');
      const before = origin.count('/c');
      assert.deepEqual(JSON.parse((await purge({ tags: ['bk_3'], soft: true })).body), { purged: 1 });
      const reply = await fx.get('/c');
      assert.equal(reply.status, 200);
      assert.match(String(reply.headers['cache-status']), /fwd=stale; stored; fwd-status=304/);
      assert.equal(origin.count('/c'), before + 1);
      assert.match(await status('/c'), /; hit/);
      assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_purges_total', { kind: 'tags', mode: 'soft' }), 1);
    });
  });

describe('a fill that a purge overtakes', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  let release: () => void = () => undefined;
  let answered = 0;

  before(async () => {
    origin = await startScriptedOrigin((req, res) => {
      const version = ++answered;
      const send = (): void => {
        res.setHeader('cache-control', 'public, max-age=3600');
        res.setHeader('surrogate-key', 'bk_9');
        res.end(JSON.stringify({ version }));
      };
      if (version === 1) release = send;
      else send();
    });
    fx = await startGatewayFixture(origin.url, { 'gateway.routes': HTTP_ROUTE });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('is not stored, and requests that arrive after the purge do not wait for it', async () => {
    const first = fx.get('/slow');
    await until(() => Promise.resolve(origin.count('/slow') === 1));
    const purged = await send(`${fx.gateway.adminUrl}/purge`, 'POST', { authorization: `Bearer ${await fx.token('catalog:admin')}` }, { tags: ['bk_9'] });
    assert.equal(purged.status, 200);
    const afterPurge = await fx.get('/slow');
    assert.deepEqual(JSON.parse(afterPurge.body), { version: 2 }, 'asked the origin afresh, not the fill in flight');
    release();
    const overtaken = await first;
    assert.deepEqual(JSON.parse(overtaken.body), { version: 1 });
    assert.match(String(overtaken.headers['cache-status']), /detail=purged/);
    const next = await fx.get('/slow');
    assert.deepEqual(JSON.parse(next.body), { version: 2 }, 'what is stored is the answer fetched after the purge');
    assert.match(String(next.headers['cache-status']), /; hit/);
  });
});

describe('events from an origin the gateway registered with', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  let secret = '';
  let registrations = 0;
  let registeredUrl = '';

  before(async () => {
    origin = await startScriptedOrigin((req, res) => {
      if (req.target === `/v1/webhooks/wh_${registrations}` && req.method === 'GET') {
        res.end(JSON.stringify({ id: `wh_${registrations}`, url: registeredUrl, types: ['book.availability.changed'] }));
        return;
      }
      if (req.target === '/v1/webhooks' && req.method === 'POST') {
        registrations++;
        secret = `whsec_${Buffer.from(`secret-${registrations}-0123456789abcdef`).toString('base64')}`;
        const url = (JSON.parse(req.body) as { url: string }).url;
        registeredUrl = url;
        res.statusCode = 201;
        res.end(JSON.stringify({ id: `wh_${registrations}`, url, types: ['book.availability.changed'], secret }));
        return;
      }
      tagged(
        new Map([
          ['/v1/books/bk_1', 'bk_1'],
          ['/v1/books', 'bk_1 bk_2 avail_branch_central'],
        ]),
      )(req, res);
    });
    fx = await startGatewayFixture(origin.url, { 'gateway.events.register': true });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  const deliver = (payload: unknown, options: { id?: string; key?: string; at?: Date } = {}): Promise<Reply> => {
    const body = JSON.stringify(payload);
    const at = options.at ?? new Date();
    const id = options.id ?? `msg_${Math.random()}`;
    return send(
      `${fx.gateway.adminUrl}/events`,
      'POST',
      {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(options.key ?? secret).sign(id, at, body),
      },
      body,
    );
  };
  const change = (book: string, branch: string): unknown => ({
    type: 'book.availability.changed',
    timestamp: new Date().toISOString(),
    data: { book, branch, available: false },
  });
  const purges = async (): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_purges_total', { kind: 'tags', mode: 'hard' });

  test('the gateway registered its admin /events at start, with a catalog:admin token', () => {
    const registration = origin.seen.find((s) => s.target === '/v1/webhooks' && s.method === 'POST');
    assert.ok(registration !== undefined);
    assert.equal((JSON.parse(registration.body) as { url: string }).url, `${fx.gateway.adminUrl}/events`);
    const token = String(registration.headers.authorization).replace('Bearer ', '');
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { scope: string };
    assert.equal(claims.scope, 'catalog:admin');
  });

  test('a signed availability change purges the book and the availability searches', async () => {
    await fx.get('/v1/books/bk_1');
    await fx.get('/v1/books?q=x&branch=branch_central&available=true');
    const reply = await deliver(change('bk_1', 'branch_central'));
    assert.equal(reply.status, 200, reply.body);
    assert.deepEqual(JSON.parse(reply.body), { purged: 2 });
    assert.match(String((await fx.get('/v1/books/bk_1')).headers['cache-status']), /fwd=miss/);
    const metrics = await fx.metrics();
    assert.equal(metricValue(metrics, 'catalog_gateway_events_received_total', { outcome: 'purged' }), 1);
    assert.equal(metricValue(metrics, 'catalog_gateway_purge_lag_seconds_count'), 1);
  });

  test('forged, stale-timestamped, replayed and malformed events are refused and purge nothing; a retry is acknowledged once', async () => {
    await fx.get('/v1/books/bk_1');
    const before = await purges();
    const forged = await deliver(change('bk_1', 'branch_central'), { key: `whsec_${Buffer.from('not the secret at all').toString('base64')}` });
    assert.equal(forged.status, 401);
    assert.equal((JSON.parse(forged.body) as { type: string }).type, 'https://catalog.example/problems/webhook-signature');
    const stale = await deliver(change('bk_1', 'branch_central'), { at: new Date(Date.now() - 10 * 60_000) });
    assert.equal(stale.status, 401);
    assert.match(stale.body, /too old/);
    const unsigned = await send(`${fx.gateway.adminUrl}/events`, 'POST', {}, change('bk_1', 'branch_central'));
    assert.equal(unsigned.status, 401);
    assert.equal((await deliver({ type: 'book.availability.changed', timestamp: 'now', data: { book: 'x' } })).status, 422);
    const longId = `msg_${'y'.repeat(8000)}`;
    assert.equal(
      (await deliver(change('bk_1', 'branch_central'), { id: longId, key: `whsec_${Buffer.from('not the secret at all').toString('base64')}` })).status,
      401,
    );
    const refusal = fx.logs.lines().findLast((l) => l.msg === 'event refused');
    assert.ok(refusal !== undefined && String(refusal.webhookId).length <= 129, "a refused event's id is logged cut short");
    assert.ok(!fx.logs.text().includes('y'.repeat(200)));
    assert.equal(await purges(), before, 'nothing was purged');
    assert.match(String((await fx.get('/v1/books/bk_1')).headers['cache-status']), /; hit/);

    const at = new Date();
    const event = change('bk_1', 'branch_central');
    const first = await deliver(event, { id: 'msg_once', at });
    assert.equal(first.status, 200);
    const replayed = await deliver(event, { id: 'msg_once', at });
    assert.equal(replayed.status, 409, replayed.body);
    assert.equal((JSON.parse(replayed.body) as { type: string }).type, 'https://catalog.example/problems/webhook-replayed');
    const retried = await deliver(event, { id: 'msg_once', at: new Date(at.getTime() + 2000) });
    assert.equal(retried.status, 200);
    assert.deepEqual(JSON.parse(retried.body), { purged: 0, duplicate: true });
    assert.equal(await purges(), before + 1, 'one purge for the event, none for its replay or retry');
    const metrics = await fx.metrics();
    assert.equal(metricValue(metrics, 'catalog_gateway_events_received_total', { outcome: 'refused' }), 6);
    assert.equal(metricValue(metrics, 'catalog_gateway_events_received_total', { outcome: 'duplicate' }), 1);
  });

  test('a restarted gateway keeps its registration', async () => {
    const config = fx.config;
    await fx.stop();
    fx = await startGatewayFixture(origin.url, {
      dataDir: config.dataDir,
      'gateway.events.register': true,
      'gateway.adminPort': Number(new URL(fx.gateway.adminUrl).port),
    });
    assert.equal(registrations, 1, 'the origin still knows it: no second registration');
    assert.equal((await deliver(change('bk_2', 'branch_central'))).status, 200);
  });
});

test('with no registration and no configured secret, events are refused with 503 so the sender keeps them', async () => {
  const origin = await startScriptedOrigin(tagged(new Map()));
  const fx = await startGatewayFixture(origin.url);
  try {
    const reply = await get(`${fx.gateway.adminUrl}/events`, { 'content-type': 'application/json' }, 'POST');
    assert.equal(reply.status, 503);
  } finally {
    await fx.stop();
    await origin.close();
  }
});
