/**
 * RFC 9111 through real servers, section by section, for the rows an audit against the
 * cache-tests.fyi kind of suite found missing: a scripted origin, a gateway with one `http` route
 * in front of it, and undici as the client. The gateway's clock is the fixture's, advanced by hand.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, until, type Reply } from '../support/harness.ts';
import { plainAnswer, startScriptedOrigin, type ScriptedOrigin, type Seen } from '../support/scripted-origin.ts';

describe('RFC 9111 shared cache, section by section', () => {
  const answers = new Map<string, (req: Seen, res: ServerResponse) => void>();
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startScriptedOrigin((req, res) => {
      const script = answers.get(req.target);
      assert.ok(script !== undefined, `no answer scripted for ${req.target}`);
      script(req, res);
    });
    fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  const send = (target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> => get(`${fx.gateway.url}${target}`, headers, method);
  const on = (target: string, status: number, headers: Record<string, string>, body = target): void => {
    answers.set(target, plainAnswer(status, headers, body));
  };
  /** An HTTP-date `seconds` from the gateway's now. */
  const dateIn = (seconds: number): string => new Date(fx.clock.now() + seconds * 1000).toUTCString();
  const cacheStatus = (r: Reply): string => String(r.headers['cache-status']);
  const last = (target: string): Seen | undefined => origin.seen.filter((s) => s.target === target).at(-1);

  test('§4.3.4: a 304 without validators answers the validation of a Last-Modified response; the stored body is sent, no second request', async () => {
    const lastModified = dateIn(-86_400);
    answers.set('/bare-304', (req, res) => {
      if (req.headers['if-modified-since'] === lastModified) {
        res.writeHead(304, { 'cache-control': 'max-age=60' });
        res.end();
        return;
      }
      res.writeHead(200, { 'cache-control': 'max-age=1', 'last-modified': lastModified });
      res.end('stored');
    });
    await send('/bare-304');
    fx.clock.advance(2000);
    const validated = await send('/bare-304');
    assert.equal(validated.body, 'stored');
    assert.equal(cacheStatus(validated), 'catalog-gateway; fwd=stale; stored; fwd-status=304; ttl=60');
    assert.equal(origin.count('/bare-304'), 2);
    assert.match(cacheStatus(await send('/bare-304')), /; hit; ttl=60$/, 'fresh again by the 304');
  });

  test('§3: without explicit freshness a status that is not heuristically cacheable is not stored, even with validators; public allows it', async () => {
    const validators = { etag: '"v"', 'last-modified': dateIn(-86_400) };
    for (const status of [201, 202, 302, 303, 307, 400, 403, 500]) {
      const target = `/not-heuristic/${status}`;
      on(target, status, validators);
      await send(target);
      const again = await send(target);
      assert.equal(last(target)?.headers['if-none-match'], undefined, `${status}: asked afresh, not validated`);
      assert.match(cacheStatus(again), /^catalog-gateway; fwd=miss; fwd-status=\d+; detail=no-freshness$/, String(status));
    }
    on('/not-heuristic/public', 201, { ...validators, 'cache-control': 'public' });
    await send('/not-heuristic/public');
    assert.match(cacheStatus(await send('/not-heuristic/public')), /; hit;/, 'public: a heuristic lifetime');
    on('/heuristic/etag-only', 404, { etag: '"v"' });
    await send('/heuristic/etag-only');
    await send('/heuristic/etag-only');
    assert.equal(last('/heuristic/etag-only')?.headers['if-none-match'], '"v"', 'a heuristically cacheable status with a validator is kept for validation');
  });

  test("§4.3.3: a newer full answer that may not be stored retires the stored one; one kept out for the request's own sake does not", async () => {
    const script = (target: string, later: Record<string, string>): void => {
      let asked = 0;
      answers.set(target, (_req, res) => {
        asked++;
        res.writeHead(200, asked === 1 ? { 'cache-control': 'max-age=100' } : later);
        res.end(`answer ${asked}`);
      });
    };
    script('/retired', { 'cache-control': 'no-store' });
    await send('/retired');
    assert.equal((await send('/retired', { 'cache-control': 'no-cache' })).body, 'answer 2');
    const after = await send('/retired');
    assert.equal(after.body, 'answer 3', 'the origin said no-store since: the older answer is not served on');
    assert.match(cacheStatus(after), /^catalog-gateway; fwd=miss; fwd-status=200; detail=no-store$/);
    script('/kept', { 'cache-control': 'max-age=100' });
    await send('/kept');
    await send('/kept', { 'cache-control': 'no-cache, no-store' });
    await send('/kept', { 'cache-control': 'no-cache', authorization: 'Basic dTpw' });
    const hit = await send('/kept');
    assert.equal(hit.body, 'answer 1', 'answers kept out for the request (its no-store, its Authorization) leave the stored one');
    assert.match(cacheStatus(hit), /; hit;/);
  });

  test('§4.3.3: the requests waiting on a validation that retires the stored response each get the new answer, and a fill in flight for another target keeps its waiters', async () => {
    const waiting = async (): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_fill_waiting_requests');
    let retiring = false;
    let releaseRetiring = (): void => undefined;
    let releaseOther = (): void => undefined;
    const retiringHeld = new Promise<void>((resolve) => {
      releaseRetiring = resolve;
    });
    const otherHeld = new Promise<void>((resolve) => {
      releaseOther = resolve;
    });
    answers.set('/retiring', (_req, res) => {
      if (!retiring) {
        res.writeHead(200, { 'cache-control': 'max-age=100', etag: '"r"' });
        res.end('stored');
        return;
      }
      void retiringHeld.then(() => {
        res.writeHead(200, { 'cache-control': 'no-store' });
        res.end('newer');
      });
    });
    answers.set('/in-flight', (_req, res) => {
      void otherHeld.then(() => {
        res.writeHead(200, { 'cache-control': 'max-age=100' });
        res.end('other');
      });
    });
    await send('/retiring');
    retiring = true;
    const others = Array.from({ length: 3 }, () => send('/in-flight'));
    const validations = Array.from({ length: 3 }, () => send('/retiring', { 'cache-control': 'no-cache' }));
    await until(async () => (await waiting()) === 4);
    releaseRetiring();
    for (const reply of await Promise.all(validations)) assert.equal(reply.body, 'newer', cacheStatus(reply));
    assert.equal(origin.count('/retiring'), 4, 'the waiters were released to ask on their own: the answer could not be shared');
    assert.match(cacheStatus(await send('/retiring')), /^catalog-gateway; fwd=miss; fwd-status=200; detail=no-store$/, 'retired');
    // The retire, a purge, let go of the fill in flight for /in-flight; the requests waiting on it still hold it.
    releaseOther();
    const answered = await Promise.all(others);
    for (const reply of answered) assert.equal(reply.body, 'other', cacheStatus(reply));
    assert.equal(answered.filter((r) => /collapsed/.test(cacheStatus(r))).length, 2);
    assert.equal(origin.count('/in-flight'), 1);
  });

  test('§4.3.3 with §5.2.1.5, §3.5: a 304 to a validation for a request with no-store or Authorization leaves the stored response to everyone else', async () => {
    answers.set('/kept-on-304', (req, res) => {
      const validating = req.headers['if-none-match'] === '"k"';
      res.writeHead(validating ? 304 : 200, { etag: '"k"', 'cache-control': 'max-age=100' });
      res.end(validating ? undefined : 'stored');
    });
    await send('/kept-on-304');
    for (const own of [{ 'cache-control': 'no-cache, no-store' }, { 'cache-control': 'no-cache', authorization: 'Basic dTpw' }]) {
      const validated = await send('/kept-on-304', own);
      assert.equal(validated.body, 'stored');
      assert.equal(last('/kept-on-304')?.headers['if-none-match'], '"k"');
      const hit = await send('/kept-on-304');
      assert.match(cacheStatus(hit), /; hit;/, `after ${JSON.stringify(own)}`);
      assert.equal(hit.body, 'stored');
    }
    assert.equal(origin.count('/kept-on-304'), 3);
  });

  test("§4.4: an absolute Location or Content-Location on the origin's own authority (the Host it hears) is invalidated; another authority is not", async () => {
    for (const target of ['/moved/here', '/moved/there', '/moved/elsewhere']) on(target, 200, { 'cache-control': 'max-age=100' });
    answers.set('/moved', (req, res) => {
      res.writeHead(201, { location: `http://${req.headers.host}/moved/here`, 'content-location': `http://${req.headers.host}/moved/there` });
      res.end();
    });
    answers.set('/moved-away', (_req, res) => {
      res.writeHead(201, { location: 'http://other.example/moved/elsewhere' });
      res.end();
    });
    for (const target of ['/moved/here', '/moved/there', '/moved/elsewhere']) await send(target);
    await send('/moved', {}, 'POST');
    await send('/moved-away', {}, 'POST');
    for (const target of ['/moved/here', '/moved/there', '/moved/elsewhere']) await send(target);
    assert.equal(origin.count('/moved/here'), 2, 'Location');
    assert.equal(origin.count('/moved/there'), 2, 'Content-Location');
    assert.equal(origin.count('/moved/elsewhere'), 1, "another origin's URI invalidates nothing here");
  });

  test('RFC 9110 §6.6.1: a response received without Date is stored dated the time it was received, and its hits keep that Date', async () => {
    answers.set('/undated', (_req, res) => {
      res.sendDate = false;
      res.writeHead(200, { 'cache-control': 'max-age=600' });
      res.end('undated');
    });
    // The gateway's clock an hour from the wall clock Node would date a send by.
    fx.clock.advance(3_600_000);
    const received = new Date(fx.clock.now()).toUTCString();
    const miss = await send('/undated');
    fx.clock.advance(100_000);
    const hit = await send('/undated');
    assert.equal(miss.headers.date, received);
    assert.equal(hit.headers.date, received, 'the Date of receipt, with Age counting from it');
    assert.equal(hit.headers.age, '100');
  });

  test('§5.2.1.1: a request max-age=0 validates even a response stored the same millisecond', async () => {
    answers.set('/reload', (req, res) => {
      res.writeHead(req.headers['if-none-match'] === '"r"' ? 304 : 200, { 'cache-control': 'max-age=100', etag: '"r"' });
      res.end(req.headers['if-none-match'] === undefined ? 'reload' : undefined);
    });
    await send('/reload');
    const reloaded = await send('/reload', { 'cache-control': 'max-age=0' });
    assert.equal(reloaded.body, 'reload');
    assert.equal(cacheStatus(reloaded), 'catalog-gateway; fwd=request; stored; fwd-status=304; ttl=100');
    assert.equal(last('/reload')?.headers['if-none-match'], '"r"');
  });

  test('RFC 9110 §13.1.2, §8.8.3: an If-None-Match list is read by entity tag, so a tag holding a comma matches whole', async () => {
    on('/comma-tag', 200, { 'cache-control': 'max-age=100', etag: '"v1,2"' });
    await send('/comma-tag');
    assert.equal((await send('/comma-tag', { 'if-none-match': '"v0", "v1,2"' })).status, 304);
    assert.equal((await send('/comma-tag', { 'if-none-match': '"v1", "2"' })).status, 200, 'its halves are other tags');
  });

  test('§3.1: the proxy authentication fields are neither stored nor relayed; unknown fields are', async () => {
    on('/proxy-fields', 200, {
      'cache-control': 'max-age=100',
      'proxy-authenticate': 'Basic realm="p"',
      'proxy-authentication-info': 'nextnonce="n"',
      'x-unknown': 'kept',
    });
    const miss = await send('/proxy-fields');
    const hit = await send('/proxy-fields');
    for (const r of [miss, hit]) {
      assert.equal(r.headers['proxy-authenticate'], undefined);
      assert.equal(r.headers['proxy-authentication-info'], undefined);
      assert.equal(r.headers['x-unknown'], 'kept');
    }
    assert.match(cacheStatus(hit), /; hit;/);
  });

  test('§5.2, §4.2.1: Cache-Control is read by its grammar: quoted arguments, the first of duplicates, any case; an invalid or spaced max-age is stale', async () => {
    const reuses = async (value: string): Promise<boolean> => {
      const target = `/cc/${encodeURIComponent(value)}`;
      on(target, 200, { 'cache-control': value });
      await send(target);
      await send(target);
      return origin.count(target) === 1;
    };
    for (const value of [
      'max-age="100"',
      'max-age=100, max-age=0',
      'MAX-AGE=100',
      'max-age=0100',
      'foo="max-age=0, no-store", max-age=100',
      'no-cache="x, y", max-age=100',
    ]) {
      assert.equal(await reuses(value), true, value);
    }
    for (const value of [
      'max-age=0, max-age=100',
      'max-age=100a',
      'max-age=-100',
      'max-age=100.5',
      'max-age=+100',
      'max-age=',
      'max-age = 100',
      'max-age =100',
      'max-age= 100',
      'max-age=100, No-Store',
    ]) {
      assert.equal(await reuses(value), false, value);
    }
  });

  test('§5.2.2.7, §5.2.2.4 with §3.2: fields a 304 brings that private= or no-cache= name are not stored; the client that asked gets them', async () => {
    answers.set('/named-304', (req, res) => {
      if (req.headers['if-none-match'] === '"n"') {
        res.writeHead(304, {
          etag: '"n"',
          'cache-control': 'max-age=100, private="set-cookie", no-cache="x-token"',
          'set-cookie': 'session=for-the-validator',
          'x-token': 'new',
        });
        res.end();
        return;
      }
      res.writeHead(200, { etag: '"n"', 'cache-control': 'max-age=1, private="set-cookie"', 'x-token': 'old' });
      res.end('named');
    });
    await send('/named-304');
    fx.clock.advance(2000);
    const validating = await send('/named-304');
    assert.match(cacheStatus(validating), /fwd-status=304/);
    assert.equal(validating.headers['set-cookie'], 'session=for-the-validator', 'the response to its own request');
    const other = await send('/named-304');
    assert.match(cacheStatus(other), /; hit;/);
    assert.equal(other.headers['set-cookie'], undefined, 'never replayed to another client');
    assert.equal(other.headers['x-token'], undefined, 'a field the 304 newly names is dropped from the stored response');
  });

  test('§4 with §3.2: a request that waited for a validation gets the 304-updated response only as it may be stored', async () => {
    const waiting = async (): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_fill_waiting_requests');
    /** A stale entry, then two requests at once: the origin answers the validation once the second waits on it. */
    const validatedTogether = async (target: string, notModified: Record<string, string>): Promise<Reply[]> => {
      let validations = 0;
      answers.set(target, (req, res) => {
        if (req.headers['if-none-match'] !== '"t"') {
          res.writeHead(200, { etag: '"t"', 'cache-control': 'max-age=1' });
          res.end('together');
          return;
        }
        // The first is held until the second request waits on it; a waiter sent away asks again, answered at once.
        const first = ++validations === 1;
        void until(async () => !first || (await waiting()) === 1).then(() => {
          res.writeHead(304, { etag: '"t"', ...notModified });
          res.end();
        });
      });
      await send(target);
      fx.clock.advance(2000);
      return Promise.all([send(target), send(target)]);
    };
    const named = await validatedTogether('/together-named', { 'cache-control': 'max-age=100, private="set-cookie"', 'set-cookie': 'who=leader' });
    assert.deepEqual(
      named.map((r) => r.headers['set-cookie']).sort(),
      ['who=leader', undefined].sort(),
      'the waiter gets the stored response, without the cookie',
    );
    assert.equal(origin.count('/together-named'), 2);
    const unstorable = await validatedTogether('/together-private', { 'cache-control': 'private, max-age=100' });
    assert.equal(origin.count('/together-private'), 3, 'a 304 that makes the response private sends the waiter to the origin');
    assert.ok(unstorable.every((r) => !String(r.headers['cache-status']).includes('collapsed')));
  });

  test('§5.1, §1.2.2: an Age past 2^31 is counted as 2^31 and sent no larger, also from storage; a copy that old is validated', async () => {
    answers.set('/ancient', (req, res) => {
      const validating = req.headers['if-none-match'] === '"old"';
      res.writeHead(validating ? 304 : 200, { 'cache-control': 'max-age=100', etag: '"old"', age: '99999999999' });
      res.end(validating ? undefined : 'ancient');
    });
    const first = await send('/ancient');
    assert.equal(first.headers.age, '2147483648');
    fx.clock.advance(5000);
    const stale = await send('/ancient', { 'cache-control': 'max-stale' });
    assert.match(cacheStatus(stale), /detail=max-stale$/);
    assert.equal(stale.headers.age, '2147483648', 'not 2^31 plus the time since');
    await send('/ancient');
    assert.equal(last('/ancient')?.headers['if-none-match'], '"old"', 'otherwise validated');
  });

  test('§5.2.1.1 with RFC 5861 §3: a request max-age without max-stale is not answered stale within stale-while-revalidate', async () => {
    on('/swr-max-age', 200, { 'cache-control': 'max-age=10, stale-while-revalidate=100' });
    await send('/swr-max-age');
    fx.clock.advance(20_000);
    const validated = await send('/swr-max-age', { 'cache-control': 'max-age=60' });
    assert.match(cacheStatus(validated), /^catalog-gateway; fwd=stale; stored; fwd-status=200$/, 'the age (20 s) is within max-age, but the response is stale');
    fx.clock.advance(20_000);
    assert.match(cacheStatus(await send('/swr-max-age')), /detail=stale-while-revalidate$/, 'without max-age the window applies');
  });

  test("RFC 5861 §4: stale-if-error stands in for a 500, 502, 503 or 504; a 501 is relayed as the origin's answer", async () => {
    let status = 200;
    answers.set('/fallback', (_req, res) => {
      res.writeHead(status, { 'cache-control': status === 200 ? 'max-age=1, stale-if-error=100' : 'no-store' });
      res.end(`status ${status}`);
    });
    await send('/fallback');
    fx.clock.advance(2000);
    status = 501;
    const notImplemented = await send('/fallback');
    assert.equal(notImplemented.status, 501);
    assert.equal(cacheStatus(notImplemented), 'catalog-gateway; fwd=stale; fwd-status=501; detail=no-store');
    status = 503;
    const unavailable = await send('/fallback');
    assert.equal(unavailable.body, 'status 200');
    assert.match(cacheStatus(unavailable), /^catalog-gateway; fwd=stale; fwd-status=503; ttl=-\d+; detail=stale-if-error$/);
  });

  test('RFC 5861 §3, §4 with §3: a response stale on arrival (max-age=0) without a validator is kept for its stale window alone', async () => {
    let asked = 0;
    answers.set('/stale-on-arrival', (_req, res) => {
      asked++;
      res.writeHead(200, { 'cache-control': 'max-age=0, stale-while-revalidate=60' });
      res.end(`answer ${asked}`);
    });
    assert.match(cacheStatus(await send('/stale-on-arrival')), /^catalog-gateway; fwd=miss; stored; fwd-status=200$/);
    const stale = await send('/stale-on-arrival');
    assert.equal(stale.body, 'answer 1');
    assert.match(cacheStatus(stale), /; hit; ttl=0; detail=stale-while-revalidate$/);
    await until(() => Promise.resolve(asked === 2));
    await until(async () => (await send('/stale-on-arrival', { 'cache-control': 'max-stale' })).body === 'answer 2');
    let failing = false;
    answers.set('/stale-on-arrival/error', (_req, res) => {
      res.writeHead(failing ? 503 : 200, { 'cache-control': failing ? 'no-store' : 'max-age=0, stale-if-error=60' });
      res.end(failing ? 'down' : 'kept');
    });
    await send('/stale-on-arrival/error');
    failing = true;
    const standIn = await send('/stale-on-arrival/error');
    assert.equal(standIn.body, 'kept', 'kept for its stale-if-error window');
    assert.match(cacheStatus(standIn), /detail=stale-if-error$/);
    on('/stale-on-arrival/none', 200, { 'cache-control': 'max-age=0, stale-while-revalidate=60, must-revalidate' });
    assert.match(cacheStatus(await send('/stale-on-arrival/none')), /detail=already-stale$/, 'must-revalidate allows no stale window');
  });

  /**
   * Two GETs of a fresh target `pauseMs` apart, the origin answering `status` and `headers` (a list
   * is sent as that many field lines); how often the origin was asked, and the second reply.
   */
  let probes = 0;
  const askedTwice = async (
    status: number,
    headers: Record<string, string | string[]>,
    requests: [Record<string, string>, Record<string, string>] = [{}, {}],
    pauseMs = 0,
  ): Promise<{ asked: number; second: Reply; target: string }> => {
    const target = `/twice/${probes++}`;
    answers.set(target, (_req, res) => {
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(status === 204 ? undefined : target);
    });
    await send(target, requests[0]);
    fx.clock.advance(pauseMs);
    const second = await send(target, requests[1]);
    return { asked: origin.count(target), second, target };
  };
  /** Whether the second of two GETs was answered from storage. */
  const reused = async (
    status: number,
    headers: Record<string, string | string[]>,
    requests?: [Record<string, string>, Record<string, string>],
    pauseMs = 0,
  ): Promise<boolean> => {
    const { asked } = await askedTwice(status, headers, requests, pauseMs);
    return asked === 1;
  };

  test("§4.2.3, §5.1: Age arithmetic: the first of several Age lines counts, a negative or fractional one is ignored, the origin's delay is added; no Warning is generated", async () => {
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', age: '7200' }), false, 'older than its lifetime on arrival');
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', age: ['0', '7200'] }), true, 'the first line counts');
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', age: ['7200', '0'] }), false);
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', age: '-7200' }), true, 'not delta-seconds: ignored');
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', age: '7200.0' }), true);
    answers.set('/slow-origin', (_req, res) => {
      fx.clock.advance(3000);
      res.writeHead(200, { 'cache-control': 'max-age=3600', age: '10' });
      res.end('slow');
    });
    await send('/slow-origin');
    fx.clock.advance(5000);
    const hit = await send('/slow-origin');
    assert.equal(hit.headers.age, '18', 'age_value 10 + response_delay 3 + resident 5');
    const stale = await askedTwice(200, { 'cache-control': 'max-age=1, stale-if-error=60' }, [{}, { 'cache-control': 'max-stale' }], 5000);
    assert.match(cacheStatus(stale.second), /detail=max-stale$/);
    assert.equal(stale.second.headers.warning, undefined, 'Warning is obsoleted (§5.5)');
  });

  test('§4.2.2 with RFC 9110 §15.1: a heuristic lifetime for every heuristically cacheable status, none for the others', async () => {
    const lastModified = { date: dateIn(0), 'last-modified': dateIn(-100_000) };
    for (const status of [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]) assert.equal(await reused(status, lastModified), true, String(status));
    for (const status of [201, 202, 302, 303, 307, 400, 403, 500, 502, 503]) assert.equal(await reused(status, lastModified), false, String(status));
    assert.equal(await reused(200, lastModified, undefined, 10_001_000), false, 'stale after 10% of the 100 000 s');
  });

  test('§3, §4.2.1, §5.2.2.3: with explicit freshness any final status is stored; must-understand only for a status the cache understands', async () => {
    for (const status of [201, 202, 299, 302, 307, 400, 403, 499, 500, 502, 599])
      assert.equal(await reused(status, { 'cache-control': 'max-age=3600' }), true, String(status));
    assert.equal(await reused(299, { date: dateIn(0), expires: dateIn(3600) }), true, 'Expires is explicit freshness too');
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600, must-understand, no-store' }), true);
    assert.equal(await reused(299, { 'cache-control': 'max-age=3600, must-understand, no-store' }), false, 'an unknown status: no-store holds');
    assert.equal(await reused(299, { 'cache-control': 'max-age=3600, must-understand' }), false, 'an unknown status is not stored at all');
  });

  test('§4.2.1, §5.2.2.10, §5.3: s-maxage over max-age and Expires, max-age over Expires; two Expires lines, or an invalid one, are stale', async () => {
    const date = dateIn(0);
    assert.equal(await reused(200, { 'cache-control': 's-maxage=3600, max-age=0' }), true);
    assert.equal(await reused(200, { 'cache-control': 's-maxage=0, max-age=3600' }), false);
    assert.equal(await reused(200, { 'cache-control': 's-maxage=3600', date, expires: dateIn(-3600) }), true);
    assert.equal(await reused(200, { 'cache-control': 'max-age=3600', date, expires: dateIn(-3600) }), true);
    assert.equal(await reused(200, { 'cache-control': 'max-age=0', date, expires: dateIn(3600) }), false);
    assert.equal(await reused(200, { date, expires: dateIn(3600) }), true);
    assert.equal(await reused(200, { date: dateIn(7200), expires: dateIn(3600) }), false, 'Expires before Date');
    assert.equal(await reused(200, { date, expires: [dateIn(3600), dateIn(7200)] }), false);
    assert.equal(await reused(200, { date, expires: '0' }), false);
  });

  test('§4.1: Vary matches across whitespace and line splits, names in any case, in any order; * anywhere is never reused', async () => {
    const vary = (value: string | string[]): Record<string, string | string[]> => ({ 'cache-control': 'max-age=3600', vary: value });
    assert.equal(await reused(200, vary('Foo'), [{ foo: '1,2' }, { foo: '1 ,  2' }]), true);
    assert.equal(
      await reused(200, vary('FOO, bar'), [
        { foo: 'a', bar: 'b' },
        { bar: 'b', foo: 'a' },
      ]),
      true,
    );
    assert.equal(
      await reused(200, vary(['foo', 'bar']), [
        { foo: 'a', bar: 'b' },
        { foo: 'a', bar: 'c' },
      ]),
      false,
      'two Vary lines are one list',
    );
    assert.equal(await reused(200, vary('foo'), [{ foo: 'a' }, { foo: 'a', other: 'x' }]), true, 'fields not named do not count');
    assert.equal(await reused(200, vary('foo'), [{ foo: 'a' }, {}]), false, 'absent matches only absent');
    assert.equal(await reused(200, vary('foo'), [{}, { foo: '' }]), false);
    assert.equal(await reused(200, vary('foo, *'), [{ foo: 'a' }, { foo: 'a' }]), false);
  });

  test('§4.3.4 with §3.2: a 304 replaces every stored field it carries, keeps those it does not, and never the Content-Length', async () => {
    answers.set('/updated', (req, res) => {
      if (req.headers['if-none-match'] === '"u"') {
        res.writeHead(304, {
          'cache-control': 'max-age=3600',
          etag: '"u"',
          'content-length': '3',
          'content-type': 'text/html',
          'x-test': 'B',
          link: ['</b>', '</c>'],
        });
        res.end();
        return;
      }
      res.writeHead(200, { 'cache-control': 'max-age=1', etag: '"u"', 'content-type': 'text/plain', 'x-test': 'A', link: '</a>', 'x-kept': 'k' });
      res.end('0123456789');
    });
    await send('/updated');
    fx.clock.advance(2000);
    for (const reply of [await send('/updated'), await send('/updated')]) {
      assert.equal(reply.body, '0123456789');
      assert.equal(reply.headers['content-length'], '10');
      assert.equal(reply.headers['content-type'], 'text/html');
      assert.equal(reply.headers['x-test'], 'B');
      assert.deepEqual(reply.headers.link, ['</b>', '</c>'], 'every line of a field the 304 carries replaces the stored ones');
      assert.equal(reply.headers['x-kept'], 'k');
    }
    assert.equal(origin.count('/updated'), 2);
  });

  test("§4.3.2 with RFC 9110 §13.1.2, §13.1.3, §13.2.2, §15.4.5: a client's validation answered from storage; its 304 carries the fields a 200 would", async () => {
    const date = dateIn(-10);
    answers.set('/validators', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600', date, etag: 'W/"w"', vary: 'foo', 'content-location': '/validators/1', expires: dateIn(3600) });
      res.end('validators');
    });
    await send('/validators');
    const statusOf = async (headers: Record<string, string>): Promise<number> => (await send('/validators', headers)).status;
    const notModified = await send('/validators', { 'if-none-match': '"w"' });
    assert.equal(notModified.status, 304, 'the weak comparison');
    for (const name of ['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']) assert.ok(notModified.headers[name] !== undefined, name);
    assert.equal(notModified.headers['content-length'], undefined);
    assert.equal(await statusOf({ 'if-none-match': '"x", W/"w"' }), 304);
    assert.equal(await statusOf({ 'if-none-match': '*' }), 304);
    assert.equal(await statusOf({ 'if-none-match': '"x"', 'if-modified-since': dateIn(0) }), 200, 'If-None-Match decides, If-Modified-Since is ignored');
    assert.equal(await statusOf({ 'if-modified-since': dateIn(0) }), 304, 'without Last-Modified the Date stands in');
    assert.equal(await statusOf({ 'if-modified-since': dateIn(-20) }), 200);
    assert.equal(await statusOf({ 'if-modified-since': 'yesterday' }), 200, 'not an HTTP-date: ignored');
    assert.equal(origin.count('/validators'), 1);
  });

  test("§4.4: PUT, DELETE and a method of unknown safety invalidate; an error answer does not; a 303's Location does", async () => {
    const stored = (target: string): void => {
      answers.set(target, (req, res) => {
        res.writeHead(
          req.method === 'GET' ? 200 : Number(req.headers['x-status'] ?? 204),
          req.method === 'GET' ? { 'cache-control': 'max-age=3600' } : { location: '/invalidated/see' },
        );
        res.end();
      });
    };
    const invalidates = async (target: string, method: string, headers: Record<string, string> = {}): Promise<boolean> => {
      stored(target);
      await send(target);
      await send(target, headers, method);
      await send(target);
      return origin.count(target, 'GET') === 2;
    };
    for (const method of ['PUT', 'DELETE', 'PATCH', 'M-SEARCH']) assert.equal(await invalidates(`/invalidated/${method}`, method), true, method);
    assert.equal(await invalidates('/invalidated/failed', 'POST', { 'x-status': '500' }), false, '5xx');
    assert.equal(await invalidates('/invalidated/refused', 'POST', { 'x-status': '409' }), false, '4xx');
    assert.equal(await invalidates('/invalidated/options', 'OPTIONS'), false, 'a safe method');
    stored('/invalidated/see');
    await send('/invalidated/see');
    assert.equal(await invalidates('/invalidated/post', 'POST', { 'x-status': '303' }), true);
    await send('/invalidated/see');
    assert.equal(origin.count('/invalidated/see', 'GET'), 2, "the 303's Location");
  });
});
