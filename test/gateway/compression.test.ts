/**
 * Compression through real servers (issue 24): the real origin, which compresses when asked, and
 * the fault origin, which never does, each behind a real gateway; bodies read as raw bytes and
 * decoded here, so the test sees exactly what went on the wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, gzipSync, zstdDecompressSync } from 'node:zlib';
import { request } from 'undici';
import { single } from '../../src/gateway/rules/cache-control.ts';
import type { RunningOrigin } from '../../src/origin/origin.ts';
import { negotiate, offeredList } from '../../src/shared/encoding/negotiate.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, startSharingGateways, useRealOriginGateway, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, send, until } from '../support/harness.ts';
import { startRedis, type RedisServer } from '../support/redis.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

interface Wire {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

async function wire(url: string, headers: Record<string, string>, method = 'GET'): Promise<Wire> {
  const res = await request(url, { method, headers });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

function decoded(reply: Wire): string {
  switch (reply.headers['content-encoding']) {
    case undefined:
      return reply.body.toString();
    case 'gzip':
      return gunzipSync(reply.body).toString();
    case 'br':
      return brotliDecompressSync(reply.body).toString();
    case 'zstd':
      return zstdDecompressSync(reply.body).toString();
    default:
      throw new Error(`unexpected coding ${String(reply.headers['content-encoding'])}`);
  }
}

/** What every answer of a negotiated representation must say of itself. */
function assertFraming(reply: Wire, coding: string): void {
  assert.equal(reply.headers['content-encoding'], coding === 'identity' ? undefined : coding);
  assert.equal(Number(reply.headers['content-length']), reply.body.length, 'Content-Length is the length sent');
  assert.match(String(reply.headers.vary), /accept-encoding/i);
}

describe('compression in front of the real origin', () => {
  const real = useRealOriginGateway();
  let origin: RunningOrigin;
  let fx: GatewayFixture;
  let auth: Record<string, string>;
  before(async () => {
    ({ origin, fx } = real);
    auth = { authorization: `Bearer ${await fx.token()}` };
  });

  const originCalls = async (): Promise<number> => metricValue((await get(`${origin.adminUrl}/metrics`)).body, 'catalog_origin_http_requests_total');
  const through = (target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Wire> =>
    wire(`${fx.gateway.url}${target}`, { ...auth, ...headers }, method);

  test('every negotiation case, from one stored answer: one origin request, whatever each client spells', async () => {
    const target = '/v1/books?q=the&limit=50';
    const before = await originCalls();
    const identity = await through(target);
    assert.ok(identity.body.length >= 1024, 'large enough to compress');
    const cases: readonly [string | undefined, string][] = [
      [undefined, 'identity'],
      ['', 'identity'],
      ['gzip;q=0.5, br;q=0.8', 'br'],
      ['identity;q=0, zstd', 'zstd'],
      ['*', 'gzip'],
      ['gzip, deflate, br, zstd', 'gzip'],
      ['deflate, compress', 'identity'],
      ['identity;q=0, deflate', 'identity'],
      ['GZIP ; q=1, zstd;q=0', 'gzip'],
    ];
    const tags = new Map<string, string>();
    for (const [accept, coding] of cases) {
      const reply = await through(target, accept === undefined ? {} : { 'accept-encoding': accept });
      assert.equal(reply.status, 200);
      assertFraming(reply, coding);
      assert.equal(decoded(reply), identity.body.toString(), `${accept ?? 'no field'}: the same document`);
      const tag = String(reply.headers.etag);
      assert.equal(tags.get(coding) ?? tag, tag, 'a representation keeps its tag');
      tags.set(coding, tag);
    }
    assert.equal(new Set(tags.values()).size, tags.size, 'each coding has a tag of its own');
    assert.equal((await originCalls()) - before, 1, 'the key does not fragment by Accept-Encoding');
    const gzip = await through(target, { 'accept-encoding': 'gzip' });
    assert.ok(gzip.body.length * 4 < identity.body.length, `${gzip.body.length} compressed of ${identity.body.length}`);
  });

  test('an answer the origin encoded is stored as it came, and decoded for a client that cannot accept it', async () => {
    const target = '/v1/books?q=winter&limit=50';
    const direct = await wire(`${origin.url}${target}`, { ...auth, 'accept-encoding': 'gzip' });
    const directIdentity = await wire(`${origin.url}${target}`, auth);
    assert.equal(direct.headers['content-encoding'], 'gzip', 'the origin compresses when asked');
    const gzip = await through(target, { 'accept-encoding': 'gzip' });
    assert.deepEqual(gzip.body, direct.body, 'never compressed twice');
    assert.equal(gzip.headers.etag, direct.headers.etag);
    const identity = await through(target);
    assertFraming(identity, 'identity');
    assert.equal(identity.body.toString(), directIdentity.body.toString());
    assert.equal(identity.headers.etag, directIdentity.headers.etag, 'the gateway and the origin agree on every tag');
  });

  test('If-None-Match with either validator gets 304, with the tag of the representation negotiated, and no body', async () => {
    const target = '/v1/books?q=garden&limit=50';
    const identity = await through(target);
    const gzip = await through(target, { 'accept-encoding': 'gzip' });
    const [identityTag, gzipTag] = [String(identity.headers.etag), String(gzip.headers.etag)];
    assert.notEqual(identityTag, gzipTag);
    for (const [accept, held, expected] of [
      ['gzip', identityTag, gzipTag],
      ['identity', gzipTag, identityTag],
      ['br', `"other", ${gzipTag}`, undefined],
    ] as const) {
      const reply = await through(target, { 'accept-encoding': accept, 'if-none-match': held });
      assert.equal(reply.status, 304, `${accept} holding ${held}`);
      assert.equal(reply.body.length, 0);
      if (expected !== undefined) assert.equal(reply.headers.etag, expected);
      assert.match(String(reply.headers.vary), /accept-encoding/);
    }
    assert.equal((await through(target, { 'accept-encoding': 'gzip', 'if-none-match': '"other"' })).status, 200);
  });

  test('Range, If-Range and If-Match apply to the representation sent (RFC 9110 §14.1, §13.1.1, §13.1.5)', async () => {
    const target = '/v1/books?q=the&limit=20';
    const identity = await through(target);
    const gzip = await through(target, { 'accept-encoding': 'gzip' });
    const [identityTag, gzipTag] = [String(identity.headers.etag), String(gzip.headers.etag)];
    const part = await through(target, { 'accept-encoding': 'gzip', range: 'bytes=0-99' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-encoding'], 'gzip');
    assert.equal(part.headers['content-range'], `bytes 0-99/${gzip.body.length}`, 'the coded bytes are the ones ranged');
    assert.equal(Number(part.headers['content-length']), 100);
    assert.deepEqual(part.body, gzip.body.subarray(0, 100));
    assert.equal(part.headers.etag, gzipTag);
    const tail = await through(target, { range: 'bytes=-10' });
    assert.equal(tail.headers['content-range'], `bytes ${identity.body.length - 10}-${identity.body.length - 1}/${identity.body.length}`);
    assert.deepEqual(tail.body, identity.body.subarray(-10));
    const beyond = await through(target, { 'accept-encoding': 'gzip', range: `bytes=${gzip.body.length}-` });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${gzip.body.length}`);
    assert.equal((await through(target, { 'accept-encoding': 'gzip', range: 'bytes=0-9', 'if-range': gzipTag })).status, 206);
    const whole = await through(target, { 'accept-encoding': 'gzip', range: 'bytes=0-9', 'if-range': identityTag });
    assert.equal(whole.status, 200, 'the identity tag names another representation: the whole gzip one is sent');
    assert.deepEqual(whole.body, gzip.body);
    assert.equal((await through(target, { 'accept-encoding': 'gzip', 'if-match': gzipTag })).status, 200);
    assert.equal((await through(target, { 'accept-encoding': 'gzip', 'if-match': identityTag })).status, 412);
    assert.equal((await through(target, { 'if-match': identityTag })).status, 200);
  });

  test('HEAD gives the fields GET sends, Content-Length and Content-Encoding included, and no body', async () => {
    const target = '/v1/books?q=stone&limit=50';
    for (const accept of ['gzip', 'zstd', 'identity']) {
      const got = await through(target, { 'accept-encoding': accept });
      const head = await through(target, { 'accept-encoding': accept }, 'HEAD');
      assert.equal(head.body.length, 0);
      for (const name of ['content-length', 'content-encoding', 'etag', 'vary', 'content-type'])
        assert.equal(head.headers[name], got.headers[name], `${accept} ${name}`);
    }
  });

  test('a 304 from the origin freshens the stored answer and every coding stays right', async () => {
    const target = '/v1/books?q=sea&limit=50';
    const first = await through(target, { 'accept-encoding': 'gzip' });
    const identity = await through(target);
    fx.clock.advance(61_000);
    const revalidated = await through(target, { 'accept-encoding': 'br' });
    assert.match(String(revalidated.headers['cache-status']), /fwd=stale; stored; fwd-status=304/);
    assertFraming(revalidated, 'br');
    assert.equal(decoded(revalidated), identity.body.toString());
    for (const [accept, reply] of [
      ['gzip', first],
      ['identity', identity],
    ] as const) {
      const again = await through(target, { 'accept-encoding': accept });
      assert.match(String(again.headers['cache-status']), /; hit;/);
      assert.deepEqual(again.body, reply.body);
      assert.equal(again.headers.etag, reply.headers.etag);
      assertFraming(again, accept);
    }
  });

  test('metrics count body bytes by coding; the access line has the bytes sent and the coding', async () => {
    const target = '/v1/books?q=war&limit=50';
    const reply = await through(target, { 'accept-encoding': 'zstd', 'x-request-id': 'compressed-log-line' });
    const line = fx.logs.lines().find((l) => l.reqId === 'compressed-log-line');
    assert.equal(line?.bytes, reply.body.length);
    assert.equal(line.encoding, 'zstd');
    const text = await fx.metrics();
    assert.ok(metricValue(text, 'catalog_gateway_response_body_bytes_total', { encoding: 'zstd' }) >= reply.body.length);
    assert.ok(metricValue(text, 'catalog_gateway_response_body_bytes_total', { encoding: 'identity' }) > 0);
  });
});

describe('compression in front of an origin that never compresses', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    origin.behave((target) =>
      target.includes('keep')
        ? { kind: 'json', padBytes: 4000, headers: { 'cache-control': 'public, max-age=60, no-transform' } }
        : { kind: 'json', padBytes: 4000, headers: { 'surrogate-key': 'bk_1' } },
    );
    fx = await startGatewayFixture(origin.url);
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });
  const through = async (target: string, headers: Record<string, string> = {}): Promise<Wire> =>
    wire(`${fx.gateway.url}${target}`, { authorization: `Bearer ${await fx.token()}`, ...headers });

  test('the gateway compresses once at fill; the compression ratio is counted', async () => {
    const gzip = await through('/v1/books?q=once', { 'accept-encoding': 'gzip' });
    assertFraming(gzip, 'gzip');
    const text = await fx.metrics();
    const into = metricValue(text, 'catalog_gateway_compression_bytes_total', { encoding: 'gzip', stage: 'in' });
    const out = metricValue(text, 'catalog_gateway_compression_bytes_total', { encoding: 'gzip', stage: 'out' });
    assert.equal(out, gzip.body.length);
    assert.ok(into / out > 5, `ratio ${into / out}`);
    assert.equal(origin.received.find((r) => r.target === '/v1/books?q=once')?.headers['accept-encoding'], 'gzip', 'gateway.upstream.acceptEncoding');
  });

  test('RFC 9110 §7.7 no-transform: sent as the origin sent it, whatever the client accepts', async () => {
    const reply = await through('/v1/books?q=keep', { 'accept-encoding': 'gzip, br' });
    assert.equal(reply.headers['content-encoding'], undefined);
    assert.equal(reply.headers.vary, undefined);
    assert.equal(Number(reply.headers['content-length']), reply.body.length);
  });

  test('coalesced waiters asking for different codings share one fill and each gets its own', async () => {
    const target = '/v1/books?q=gate';
    const gate = origin.hold();
    const received = origin.received.length;
    const accepts = ['gzip', 'br', 'zstd', 'identity', 'gzip', 'br'];
    const replies = accepts.map((accept) => through(target, { 'accept-encoding': accept }));
    await origin.receivedAtLeast(received + 1);
    await until(async () => metricValue(await fx.metrics(), 'catalog_gateway_in_flight_requests') >= accepts.length);
    gate.release();
    const answered = await Promise.all(replies);
    assert.equal(origin.count(target), 1);
    const documents = answered.map((reply, i) => {
      assertFraming(reply, accepts[i] ?? '');
      return decoded(reply);
    });
    assert.equal(new Set(documents).size, 1);
    assert.ok(answered.some((reply) => /collapsed/.test(String(reply.headers['cache-status']))));
  });

  test('a purge removes the entry in every coding it was made in', async () => {
    const target = '/v1/books?q=purged';
    for (const accept of ['gzip', 'identity', 'br']) await through(target, { 'accept-encoding': accept });
    for (const accept of ['gzip', 'identity', 'br'])
      assert.match(String((await through(target, { 'accept-encoding': accept })).headers['cache-status']), /; hit;/);
    const purged = await send(`${fx.gateway.adminUrl}/purge`, 'POST', { authorization: `Bearer ${await fx.token('catalog:admin')}` }, { urls: [target] });
    assert.deepEqual(JSON.parse(purged.body), { purged: 1 });
    for (const accept of ['br', 'identity', 'gzip']) {
      const reply = await through(target, { 'accept-encoding': accept });
      assert.match(String(reply.headers['cache-status']), accept === 'br' ? /fwd=miss; stored/ : /; hit;/, accept);
      assertFraming(reply, accept);
    }
    assert.equal(origin.count(target), 2);
  });

  test('an answer asked for once holds one body; a coding asked for again is kept beside it', async () => {
    const target = '/v1/books?q=the&limit=40';
    const cacheBytes = async (): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_cache_bytes');
    const before = await cacheBytes();
    const filled = await through(target);
    assertFraming(filled, 'identity');
    const asked = await cacheBytes();
    const again = await through(target);
    assert.match(String(again.headers['cache-status']), /; hit;/);
    assert.equal(decoded(again), decoded(filled));
    const kept = await cacheBytes();
    assert.ok(kept - asked > filled.body.length, `the decoded copy is stored on the second ask (${asked - before} B, then ${kept - asked} B more)`);
    assert.ok(asked - before < filled.body.length, `the fill kept the compressed body only (${asked - before} B for a ${filled.body.length} B answer)`);
    await through(target);
    assert.equal(await cacheBytes(), kept, 'the third ask finds it made');
    assert.equal(origin.count(target), 1);
  });
});

describe('an origin that encodes with no-transform, and clients that do not accept its coding', () => {
  const DOCUMENT = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, title: `book ${i}` })) });
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  before(async () => {
    // It honours Accept-Encoding, with a tag per representation, answers If-None-Match, and forbids transforming.
    origin = await startScriptedOrigin((req, res) => {
      const coding = negotiate(single(req.headers['accept-encoding']), offeredList(['gzip', 'identity']));
      if (req.target.includes('failing') && coding === 'identity') {
        res.writeHead(503);
        res.end();
        return;
      }
      const etag = coding === 'gzip' ? '"doc-gzip"' : '"doc"';
      const fields = { 'content-type': 'application/json', 'cache-control': 'public, max-age=60, no-transform', vary: 'accept-encoding', etag };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, fields);
        res.end();
        return;
      }
      res.writeHead(200, coding === 'gzip' ? { ...fields, 'content-encoding': 'gzip' } : fields);
      res.end(coding === 'gzip' ? gzipSync(DOCUMENT) : DOCUMENT);
    });
    fx = await startGatewayFixture(origin.url);
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });
  const through = async (target: string, headers: Record<string, string> = {}): Promise<Wire> =>
    wire(`${fx.gateway.url}${target}`, { authorization: `Bearer ${await fx.token()}`, ...headers });
  /** The Accept-Encoding the origin last received for `target`. */
  const askedWith = (target: string): string | string[] | undefined => origin.seen.filter((s) => s.target === target).at(-1)?.headers['accept-encoding'];

  test('RFC 9110 §7.7: the stored gzip serves gzip clients; each client that does not accept gzip is relayed what the origin answers its own Accept-Encoding, unstored', async () => {
    const target = '/v1/books?q=kept';
    const filled = await through(target, { 'accept-encoding': 'gzip' });
    assert.match(String(filled.headers['cache-status']), /fwd=miss; stored/);
    assert.equal(filled.headers['content-encoding'], 'gzip');
    assert.equal(askedWith(target), 'gzip', 'the fill asks with the gateway own Accept-Encoding');
    for (const accept of [undefined, 'identity', 'gzip;q=0, br', '']) {
      const before = origin.count(target);
      const reply = await through(target, accept === undefined ? {} : { 'accept-encoding': accept });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['content-encoding'], undefined, String(accept));
      assert.equal(reply.body.toString(), DOCUMENT);
      assert.equal(reply.headers.etag, '"doc"');
      assert.equal(reply.headers['cache-status'], 'catalog-gateway; fwd=vary-miss; fwd-status=200; detail=not-acceptable');
      assert.equal(origin.count(target) - before, 1);
      assert.equal(askedWith(target), accept, 'the client own Accept-Encoding, or none');
    }
    const conditional = await through(target, { 'accept-encoding': 'identity', 'if-none-match': '"doc"' });
    assert.equal(conditional.status, 304, 'the client own conditions go with it, and the origin answers them');
    assert.equal(await through(target, { 'cache-control': 'only-if-cached' }).then((r) => r.status), 504, 'only-if-cached: nothing stored it can take');
    const again = await through(target, { 'accept-encoding': 'gzip, br' });
    assert.match(String(again.headers['cache-status']), /; hit;/, 'the stored answer is untouched');
    assert.deepEqual(again.body, filled.body);
  });

  test('a miss from a client that does not accept the coding stores the fill for others and relays the client its own', async () => {
    const target = '/v1/books?q=cold';
    const reply = await through(target, { 'accept-encoding': 'identity' });
    assert.equal(reply.headers['content-encoding'], undefined);
    assert.equal(reply.body.toString(), DOCUMENT);
    assert.equal(reply.headers['cache-status'], 'catalog-gateway; fwd=miss; fwd-status=200; detail=not-acceptable');
    assert.equal(origin.count(target), 2, 'the fill, then the relay');
    const gzip = await through(target, { 'accept-encoding': 'gzip' });
    assert.match(String(gzip.headers['cache-status']), /; hit;/);
    assert.equal(gunzipSync(gzip.body).toString(), DOCUMENT);
  });

  test('an origin 5xx to the relay is the 502 problem on a catalog route, as a fill own would be', async () => {
    const target = '/v1/books?q=failing';
    await through(target, { 'accept-encoding': 'gzip' });
    const reply = await through(target, { 'accept-encoding': 'identity' });
    assert.equal(reply.status, 502);
    assert.equal(reply.headers['content-type'], 'application/problem+json');
    assert.equal(reply.headers['cache-status'], 'catalog-gateway; fwd=vary-miss; fwd-status=503; detail=status-503');
  });
});

describe('compression with the Redis shared tier', () => {
  let origin: FaultOrigin;
  let redis: RedisServer;
  let fleet: GatewayFixture[];
  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => ({ kind: 'json', padBytes: 4000 }));
    redis = await startRedis();
    fleet = await startSharingGateways(origin.url, redis.url, 2, { 'gateway.redis.commandTimeoutMs': 1000 });
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await redis.stop();
    await origin.close();
  });

  test('a compressed entry filled by one gateway is shared, compressed, with another, which decodes it for identity clients', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    const target = '/v1/books?q=shared';
    const filled = await wire(`${a.gateway.url}${target}`, { authorization: `Bearer ${await a.token()}`, 'accept-encoding': 'gzip' });
    assertFraming(filled, 'gzip');
    const identity = await wire(`${b.gateway.url}${target}`, { authorization: `Bearer ${await b.token()}` });
    assert.match(String(identity.headers['cache-status']), /detail=shared/);
    assertFraming(identity, 'identity');
    assert.equal(identity.body.toString(), gunzipSync(filled.body).toString());
    const gzip = await wire(`${b.gateway.url}${target}`, { authorization: `Bearer ${await b.token()}`, 'accept-encoding': 'gzip' });
    assert.deepEqual(gzip.body, filled.body, 'the bytes the fill compressed, not compressed again');
    assert.equal(gzip.headers.etag, filled.headers.etag);
    assert.equal(origin.count(target), 1);
  });
});
