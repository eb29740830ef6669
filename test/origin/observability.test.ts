/** The access log and the Prometheus metrics agree with the requests actually made. */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { get, metricValue, until } from '../support/harness.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

let f: OriginFixture;
before(async () => {
  f = await startOriginFixture();
});
after(() => f.stop());

test('request counters, duration and DB-time histograms count exactly the requests made', async () => {
  const counted = (route: string, status: string, text: string): number => metricValue(text, 'catalog_origin_http_requests_total', { route, status });
  const before = await f.metrics();
  for (let i = 0; i < 5; i++) assert.equal((await f.get(`/v1/books?q=river&limit=${i + 1}`)).status, 200);
  for (let i = 0; i < 2; i++) assert.equal((await f.get('/v1/books?q=silent%20river')).status, 200);
  for (let i = 0; i < 3; i++) assert.equal((await f.get('/v1/books/bk_1')).status, 200);
  assert.equal((await f.get('/v1/books/bk_99999999')).status, 404);
  assert.equal((await f.anonymous('/v1/branches')).status, 401);
  assert.equal((await f.anonymous('/nowhere/at/all')).status, 404);
  const text = await f.metrics();
  const delta = (route: string, status: string): number => counted(route, status, text) - counted(route, status, before);
  assert.equal(delta('/v1/books', '200'), 7);
  assert.equal(delta('/v1/books/{id}', '200'), 3);
  assert.equal(delta('/v1/books/{id}', '404'), 1);
  assert.equal(delta('/v1/branches', '401'), 1);
  assert.equal(delta('unmatched', '404'), 1);
  assert.ok(!text.includes('/nowhere'), 'raw paths never become labels');
  const histogramCount = (name: string, labels: Record<string, string>, t: string): number => metricValue(t, `${name}_count`, labels);
  assert.equal(
    histogramCount('catalog_origin_request_duration_seconds', { route: '/v1/books' }, text) -
      histogramCount('catalog_origin_request_duration_seconds', { route: '/v1/books' }, before),
    7,
  );
  const db = (plan: string, t: string): number => histogramCount('catalog_origin_db_query_duration_seconds', { plan }, t);
  assert.equal(db('term', text) - db('term', before), 5);
  assert.equal(db('match', text) - db('match', before), 2);
  assert.ok(metricValue(text, 'process_cpu_user_seconds_total') > 0, 'default process metrics on the origin registry');
});

test('one access-log line per request, with request id, subject, status, bytes and duration, never the token', async () => {
  const token = await f.token({ subject: 'reader-7' });
  const reply = await f.get('/v1/books?q=river&limit=2', { authorization: `Bearer ${token}`, 'x-request-id': 'trace-42' });
  assert.equal(reply.headers['x-request-id'], 'trace-42');
  const hostile = await f.get('/v1/branches', { 'x-request-id': 'bad id\twith spaces' });
  assert.match(String(hostile.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'an unsafe request id is replaced');
  const lines = f.logs.lines().filter((l) => l.msg === 'request');
  const line = lines.find((l) => l.reqId === 'trace-42');
  assert.ok(line !== undefined);
  assert.equal(line.method, 'GET');
  assert.equal(line.path, '/v1/books?q=river&limit=2');
  assert.equal(line.status, 200);
  assert.equal(line.bytes, Buffer.byteLength(reply.body));
  assert.equal(line.sub, 'reader-7');
  assert.equal(typeof line.durationMs, 'number');
  assert.equal(typeof line.time, 'string');
  assert.equal(lines.filter((l) => l.reqId === hostile.headers['x-request-id']).length, 1);
  assert.ok(!f.logs.text().includes(token));
});

test("a client that leaves in the middle of a loan's body is counted and logged as 499, not as the origin's failure", async () => {
  const token = await f.token({ scope: 'catalog:read catalog:write' });
  const counted = async (status: string): Promise<number> =>
    metricValue(await f.metrics(), 'catalog_origin_http_requests_total', { route: '/v1/loans', status });
  const [gone, failed] = [await counted('499'), await counted('500')];
  const socket = connect(Number(new URL(f.origin.url).port), '127.0.0.1', () => {
    socket.write(
      `POST /v1/loans HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"book"`,
    );
    setTimeout(() => socket.destroy(), 50);
  });
  socket.on('error', () => undefined);
  await until(async () => (await counted('499')) === gone + 1);
  assert.equal(await counted('500'), failed);
  assert.deepEqual(
    f.logs.lines().filter((l) => l.level === 'error' || l.level === 50),
    [],
    'nothing logged as an error',
  );
  assert.equal(
    f.logs
      .lines()
      .filter((l) => l.msg === 'request' && l.path === '/v1/loans')
      .at(-1)?.status,
    499,
  );
});

test('the admin listener answers /healthz, /readyz, 405s other methods there and 404s elsewhere', async () => {
  assert.equal((await get(`${f.origin.adminUrl}/healthz`)).status, 200);
  assert.equal((await get(`${f.origin.adminUrl}/readyz`)).status, 200);
  assert.equal((await get(`${f.origin.adminUrl}/v1/books?q=river`)).status, 404);
  assert.equal((await get(`${f.origin.adminUrl}/healthz`, {}, 'DELETE')).status, 405);
});
