/**
 * The conformance rows of issue 26 through real servers: a scripted origin, a gateway in front of
 * it, and undici as the client. Each test names the section it holds the gateway to.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { cachingFields } from '../../src/origin/origin.ts';
import { testConfig } from '../support/config.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, type Reply } from '../support/harness.ts';
import { conforms, doc, type ResponseObject } from '../support/openapi.ts';
import { plainAnswer, startScriptedOrigin, type ScriptedOrigin, type Seen } from '../support/scripted-origin.ts';

/** A response of docs/openapi.json's components, which the gateway's own errors must conform to. */
function documented(name: string): ResponseObject {
  const response = doc.components.responses[name];
  assert.ok(response !== undefined, name);
  return response;
}

const BODY = '0123456789abcdefghij';

describe('HTTP caching conformance: targeted fields, ranges, 1xx, disconnected, dates', () => {
  const answers = new Map<string, (req: Seen, res: ServerResponse) => void>();
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startScriptedOrigin((req, res) => {
      const script = answers.get(req.target);
      if (script !== undefined) {
        script(req, res);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60', etag: '"e1"' });
      res.end(BODY);
    });
    fx = await startGatewayFixture(origin.url, {
      'gateway.upstream.headersTimeoutMs': 300,
      'gateway.cache.targetedFields': 'Gateway-Cache-Control, CDN-Cache-Control',
      'gateway.routes': [
        { prefix: '/pass', mode: 'pass', auth: 'off' },
        { prefix: '/v1', mode: 'catalog', auth: 'required' },
        { prefix: '/offline', mode: 'http', auth: 'off', staleIfDisconnectedSeconds: 100 },
        { prefix: '/', mode: 'http', auth: 'off' },
      ],
    });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  const send = (target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> => get(`${fx.gateway.url}${target}`, headers, method);
  const on = (target: string, status: number, headers: Record<string, string>, body = BODY): void => {
    answers.set(target, plainAnswer(status, headers, body));
  };
  const cacheStatus = (r: Reply): string => String(r.headers['cache-status']);

  test('RFC 9213: the first valid targeted field decides over Cache-Control and Expires; an invalid one is ignored; all are forwarded', async () => {
    on('/cdn', 200, { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=100', expires: 'Thu, 01 Jan 1970 00:00:00 GMT' });
    const first = await send('/cdn');
    assert.equal(first.headers['cdn-cache-control'], 'max-age=100', 'forwarded as received');
    assert.equal(cacheStatus(await send('/cdn')), 'catalog-gateway; hit; ttl=100');
    on('/ours', 200, { 'cache-control': 'max-age=5', 'cdn-cache-control': 'no-store', 'gateway-cache-control': 'max-age=200' });
    await send('/ours');
    assert.equal(cacheStatus(await send('/ours')), 'catalog-gateway; hit; ttl=200', 'the field first on the list wins');
    on('/cdn-private', 200, { 'cache-control': 'max-age=60', 'cdn-cache-control': 'private' });
    await send('/cdn-private');
    await send('/cdn-private');
    assert.equal(origin.count('/cdn-private'), 2, 'private in the targeted field is obeyed');
    on('/cdn-invalid', 200, { 'cache-control': 'max-age=30', 'cdn-cache-control': 'MAX-AGE=999' });
    await send('/cdn-invalid');
    assert.equal(cacheStatus(await send('/cdn-invalid')), 'catalog-gateway; hit; ttl=30', 'not a Dictionary: Cache-Control decides');
    assert.equal(origin.count('/cdn'), 1);
  });

  test('RFC 9110 §14: ranges are cut from the stored complete response; fills ask for the whole', async () => {
    const range = (r: string, more: Record<string, string> = {}): Promise<Reply> => send('/range', { range: r, ...more });
    const part = await range('bytes=2-5');
    assert.equal(part.status, 206);
    assert.equal(part.body, '2345');
    assert.equal(part.headers['content-range'], 'bytes 2-5/20');
    assert.equal(part.headers['content-length'], '4');
    assert.equal(origin.seen.at(-1)?.headers.range, undefined, 'the fill asked for the whole representation');
    const suffix = await range('bytes=-3');
    assert.equal(suffix.body, 'hij');
    assert.equal(suffix.headers['content-range'], 'bytes 17-19/20');
    assert.match(cacheStatus(suffix), /; hit;/);
    assert.equal((await range('bytes=15-')).body, 'fghij');
    assert.equal((await range('bytes=10-100')).headers['content-range'], 'bytes 10-19/20', 'last-pos past the end is clamped');
    const several = await range('bytes=0-1, 5-6');
    assert.equal(several.status, 200, 'several ranges: the whole representation');
    assert.equal(several.body, BODY);
    const unsatisfiable = await range('bytes=20-30');
    assert.equal(unsatisfiable.status, 416);
    assert.equal(unsatisfiable.headers['content-range'], 'bytes */20');
    assert.equal(unsatisfiable.headers['content-type'], 'application/problem+json', 'an error like any other (RFC 9457)');
    conforms(unsatisfiable, documented('RangeNotSatisfiable'), 'get', '416');
    assert.equal((await range('items=0-1')).status, 200, 'another unit is ignored');
    assert.equal((await range('bytes=5-2')).status, 200, 'an invalid range set is ignored');
    assert.equal((await range('bytes=0-1', { 'if-range': '"e1"' })).status, 206, '§13.1.5 the strong ETag matches');
    assert.equal((await range('bytes=0-1', { 'if-range': '"e2"' })).status, 200);
    assert.equal((await range('bytes=0-1', { 'if-range': 'W/"e1"' })).status, 200, 'a weak tag never matches');
    const head = await send('/range', { range: 'bytes=0-1' }, 'HEAD');
    assert.equal(head.status, 200, 'HEAD ignores Range');
    assert.equal(origin.count('/range'), 1);
  });

  test('RFC 9110 §13.2.2: If-Match and If-Unmodified-Since are evaluated against the stored response (412)', async () => {
    on('/precondition', 200, { 'cache-control': 'max-age=60', etag: '"p1"', 'last-modified': 'Wed, 31 Dec 2025 00:00:00 GMT' });
    await send('/precondition');
    const failed = await send('/precondition', { 'if-match': '"p2"' });
    assert.equal(failed.status, 412);
    assert.equal(failed.headers['content-type'], 'application/problem+json', 'an error like any other (RFC 9457)');
    conforms(failed, documented('PreconditionFailed'), 'get', '412');
    assert.match(String(failed.headers['cache-status']), /; hit;/, 'the Cache-Status the 200 would have carried');
    on('/precondition-cold', 200, { 'cache-control': 'max-age=60', etag: '"p1"' });
    const cold = await send('/precondition-cold', { 'if-match': '"p2"' });
    assert.equal(cold.status, 412, 'evaluated against the response its fill brought');
    const line = fx.logs.lines().find((l) => l.reqId === cold.headers['x-request-id']);
    assert.equal(typeof line?.originMs, 'number', 'the access line keeps the time the fill took');
    assert.equal((await send('/precondition', { 'if-match': '"p1"' })).status, 200);
    assert.equal((await send('/precondition', { 'if-unmodified-since': 'Tue, 30 Dec 2025 00:00:00 GMT' })).status, 412);
    assert.equal((await send('/precondition', { 'if-unmodified-since': 'Tue, 30 Dec 2025 00:00:00 UTC' })).status, 200, 'not an HTTP-date: ignored');
    assert.equal(origin.count('/precondition'), 1);
  });

  test('RFC 9110 §15.2, RFC 8297: a 103 reaches the client before the final answer on http, pass and catalog routes, and is never stored', async () => {
    const early = (target: string): void => {
      answers.set(target, (_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style', 'x-hint': 'early' });
        // The final answer waits until the client has seen the hint, so the order is the relay's.
        void hinted.get(target)?.promise.then(() => {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' });
          res.end('{}');
        });
      });
    };
    const hinted = new Map<string, PromiseWithResolvers<undefined>>();
    const token = await fx.token();
    for (const target of ['/hinted', '/pass/hinted', '/v1/books?q=hinted']) {
      early(target);
      hinted.set(target, Promise.withResolvers<undefined>());
      const infos: { statusCode: number; headers: Record<string, string | string[]> }[] = [];
      const res = await request(`${fx.gateway.url}${target}`, {
        headers: { authorization: `Bearer ${token}` },
        onInfo: (info) => {
          infos.push(info);
          hinted.get(target)?.resolve(undefined);
        },
      });
      await res.body.text();
      assert.equal(res.statusCode, 200, target);
      assert.deepEqual(
        infos.map((i) => [i.statusCode, i.headers.link]),
        [[103, '</style.css>; rel=preload; as=style']],
        target,
      );
      assert.equal(res.headers['x-hint'], undefined, `${target}: the hint's fields are not the answer's`);
    }
    const hit = await request(`${fx.gateway.url}/hinted`, { onInfo: () => assert.fail('a hit has no interim response') });
    await hit.body.text();
    assert.match(String(hit.headers['cache-status']), /; hit;/);
    assert.equal(hit.headers['x-hint'], undefined);
  });

  test('RFC 9111 §4.2.4: within the route bound a stale response answers while the origin is unreachable or silent, never past must-revalidate, no-cache or s-maxage', async () => {
    on('/offline/page', 200, { 'cache-control': 'max-age=1' });
    on('/offline/strict', 200, { 'cache-control': 'max-age=1, must-revalidate' });
    on('/offline/shared', 200, { 'cache-control': 'max-age=1, s-maxage=1' });
    on('/offline/nocache', 200, { 'cache-control': 'no-cache', etag: '"n"' });
    on('/elsewhere', 200, { 'cache-control': 'max-age=1' });
    for (const target of ['/offline/page', '/offline/strict', '/offline/shared', '/offline/nocache', '/elsewhere']) await send(target);
    fx.clock.advance(30_000);
    const before = metricValue(await fx.metrics(), 'catalog_gateway_stale_served_total', { reason: 'disconnected' });
    await origin.stop();
    try {
      const stale = await send('/offline/page');
      assert.equal(stale.status, 200);
      assert.equal(cacheStatus(stale), 'catalog-gateway; fwd=stale; ttl=-29; detail=disconnected');
      // §5.2.2.2: one that must be revalidated gets the 504 a disconnected cache SHOULD send.
      for (const target of ['/offline/strict', '/offline/shared']) assert.equal((await send(target)).status, 504, target);
      assert.equal((await send('/offline/nocache')).status, 502);
      assert.equal((await send('/elsewhere')).status, 502, 'a route without the setting serves nothing stale');
      fx.clock.advance(100_000);
      assert.equal((await send('/offline/page')).status, 502, 'past the bound');
    } finally {
      await origin.start();
    }
    assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_stale_served_total', { reason: 'disconnected' }) - before, 1);
    const line = fx.logs.lines().find((l) => l.path === '/offline/page' && l.cache === 'stale');
    assert.ok(line !== undefined, 'the access log says stale');
    on('/offline/silent', 200, { 'cache-control': 'max-age=1' });
    await send('/offline/silent');
    fx.clock.advance(2000);
    answers.set('/offline/silent', () => undefined);
    assert.match(cacheStatus(await send('/offline/silent')), /^catalog-gateway; fwd=stale; ttl=-1; detail=disconnected$/, 'a timeout is a disconnection');
    on('/offline/failing', 200, { 'cache-control': 'max-age=1' });
    await send('/offline/failing');
    fx.clock.advance(2000);
    on('/offline/failing', 503, { 'cache-control': 'no-store' }, 'down');
    assert.equal((await send('/offline/failing')).status, 503, 'a 5xx is an answer, not a disconnection');
  });

  test('RFC 9110 §5.6.7, RFC 9111 §5.3 and §5.1: an Expires that is not an HTTP-date is in the past; the obsolete formats are dates; an Age with a suffix is ignored', async () => {
    const date = new Date(fx.clock.now()).toUTCString();
    on('/expires-utc', 200, { date, expires: 'Thu, 01 Jan 2099 00:00:00 UTC' });
    on('/expires-asctime', 200, { date, expires: 'Thu Jan  1 00:00:00 2099' });
    on('/age-suffix', 200, { 'cache-control': 'max-age=60', age: '3600a' });
    for (const target of ['/expires-utc', '/expires-asctime', '/age-suffix']) await send(target);
    assert.match(cacheStatus(await send('/expires-asctime')), /; hit;/);
    assert.match(cacheStatus(await send('/age-suffix')), /; hit; ttl=60$/);
    assert.equal((await send('/age-suffix')).headers.age, '0');
    await send('/expires-utc');
    assert.equal(origin.count('/expires-utc'), 2);
  });

  test('optional rows: §5.2.2.3 must-understand stores despite no-store; §4.1 Accept-Language normalised for Vary', async () => {
    on('/understood', 200, { 'cache-control': 'max-age=60, must-understand, no-store' });
    await send('/understood');
    assert.match(cacheStatus(await send('/understood')), /; hit;/);
    on('/language', 200, { 'cache-control': 'max-age=60', vary: 'Accept-Language' });
    await send('/language', { 'accept-language': 'en-US, fr;q=0.5' });
    assert.match(cacheStatus(await send('/language', { 'accept-language': 'en-us,fr; q=0.5' })), /; hit;/);
    assert.equal(origin.count('/language'), 1);
  });

  test('origin.cdnMaxAgeSeconds: the catalog origin sends a CDN-Cache-Control with the same directives and its own max-age', () => {
    assert.deepEqual(cachingFields(testConfig({ 'origin.maxAgeSeconds': 60, 'origin.staleIfErrorSeconds': 30 })), {
      'cache-control': 'public, max-age=60, stale-if-error=30',
    });
    assert.deepEqual(cachingFields(testConfig({ 'origin.maxAgeSeconds': 60, 'origin.cdnMaxAgeSeconds': 86_400 })), {
      'cache-control': 'public, max-age=60',
      'cdn-cache-control': 'public, max-age=86400',
    });
  });
});
