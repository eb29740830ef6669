/**
 * Seeded random hostile requests, written as raw bytes to a real gateway in front of a real
 * origin, and to the origin itself: odd methods and versions, targets with broken escapes,
 * repeated and unknown parameters, absurd sizes, and garbage in every field the servers read
 * (credentials, negotiation, cache directives, validators, ranges, framing). Whatever comes, the
 * answer is a status line within seconds, never a 500, an error is a problem+json whose `status`
 * is the response's, no stack trace or token comes back, the gateway logs no error, and afterwards
 * a clean search through the gateway is what the origin answers (nothing poisoned the cache).
 * Pipelined on one connection, valid and hostile requests are answered in order, and nothing is
 * answered after an answer that closed the connection (no desynchronised framing).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import { SeededRandom } from '../../src/origin/random.ts';
import { useRealOriginGateway } from '../support/gateway-fixture.ts';

const REQUESTS = 600;

const setup = useRealOriginGateway();

const WORDS = [
  'river',
  'war',
  'über',
  '東京',
  '%',
  '"',
  '*',
  'NEAR',
  'OR',
  '-x',
  '(',
  '^',
  'title:x',
  '\\',
  '%00',
  '%zz',
  '%c0%af',
  '%ff',
  '%e2%80%ae',
  '+',
  '..',
  '=',
  '#frag',
  ';',
  'x'.repeat(300),
];
const PATHS = ['/v1/books', '/v1/books', '/v1/books/', '/v1//books', '/V1/books', '/v1/books;x', '/v1/./books', '/v1/books/../books'];
const OTHER_TARGETS = [
  '/v1/books/bk_1',
  '/v1/books/bk_999999999',
  '/v1/books/%2e%2e',
  '/v1/branches',
  '/v1/branches/x',
  '/v1/loans',
  '/v1/loans/ln_1',
  '/v1/webhooks',
  '*',
  'http://localhost/v1/books?q=war',
  'https://elsewhere.example/v1/books?q=war',
  '//v1/books?q=a',
  '/',
  `/v1/books?${'q='.repeat(5000)}`,
  `/${'a'.repeat(20_000)}`,
  '/v1/books?q=a%23b',
  `/v1/books?q=${'%F0%9F%98%80'.repeat(60)}`,
];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PURGE', 'get', 'CONNECT', 'QUERY', 'X'.repeat(50)];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1'];

function parameter(random: SeededRandom): string {
  const name = random.pick(['q', 'q', 'q', 'limit', 'cursor', 'branch', 'available', 'offset', 'Q', 'q[]', 'access_token', '']);
  if (random.next() < 0.1) return name;
  const value =
    name === 'limit'
      ? random.pick(['1', '100', '101', '0', '-1', '1e3', 'abc', '0x10', '', '99999999999999999999'])
      : name === 'available'
        ? random.pick(['true', 'false', 'maybe', '', 'TRUE'])
        : name === 'cursor'
          ? random.pick(['abc', '', 'eyJ4IjoxfQ', '%%%', 'x'.repeat(2000)])
          : name === 'branch'
            ? random.pick(['branch_central', 'nowhere', '', '%00'])
            : Array.from({ length: 1 + random.below(3) }, () => random.pick(WORDS)).join(random.pick(['%20', '+', '']));
  return `${name}=${value}`;
}

function target(random: SeededRandom): string {
  if (random.next() >= 0.6) return random.pick(OTHER_TARGETS);
  const params = Array.from({ length: 1 + random.below(4) }, () => parameter(random));
  return `${random.pick(PATHS)}?${params.join(random.pick(['&', '&', '&&', ';']))}`;
}

function fields(random: SeededRandom, token: string): string[] {
  const out: string[] = [];
  const auth = random.next();
  if (auth < 0.7) out.push(`Authorization: Bearer ${token}`);
  else if (auth < 0.75) out.push('Authorization: Bearer');
  else if (auth < 0.8) out.push(`Authorization: Bearer ${token}x`);
  else if (auth < 0.85) out.push(`Authorization: Bearer ${token}`, `Authorization: Bearer ${token}`);
  else if (auth < 0.9) out.push(`Authorization: Bearer ${'x'.repeat(9000)}`);
  const choices = [
    (): string =>
      `Accept-Encoding: ${random.pick(['gzip', 'br', 'zstd', 'identity;q=0', '*;q=0', 'gzip;q=abc', '*;q=2', 'br;q=0.5, gzip;q=0.5', ',,,', 'gzip;q=0, identity;q=0', 'compress', ''])}`,
    (): string =>
      `Cache-Control: ${random.pick(['no-cache', 'max-age=abc', 'max-age=0', 'no-cache="', 'max-stale', 'only-if-cached', 'max-age=99999999999999999999', 'min-fresh=10', 'no-store', ''])}`,
    (): string => `If-None-Match: ${random.pick(['*', 'W/', '"', '"abc"', 'W/"x", "y"', '"a",'.repeat(200), 'garbage'])}`,
    (): string => `If-Modified-Since: ${random.pick(['garbage', 'Thu, 01 Jan 1970 00:00:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT'])}`,
    (): string =>
      `Range: ${random.pick(['bytes=0-10', 'bytes=abc', 'bytes=5-1', 'bytes=-0', `${'bytes=0-0,'.repeat(300)}0-0`, 'items=0-1', 'bytes=99999999-'])}`,
    (): string => `X-Request-Id: ${random.pick(['abc', 'x'.repeat(300), `${token.slice(0, 20)}.e30.sig`, '<script>'])}`,
    (): string => `X-Forwarded-For: ${random.pick(['1.2.3.4', 'garbage', '1.2.3.4, 5.6.7.8', 'x'.repeat(1000)])}`,
    (): string => `Content-Length: ${random.pick(['0', '5', 'abc', '-1'])}`,
    (): string => `Transfer-Encoding: ${random.pick(['chunked', 'gzip', 'chunked, chunked'])}`,
    (): string => 'Expect: 100-continue',
    (): string => `Connection: ${random.pick(['upgrade', 'x-other'])}`,
    (): string => `Upgrade: ${random.pick(['websocket', 'h2c'])}`,
    (): string => `Host: ${random.pick(['', 'elsewhere.example', 'localhost:1'])}`,
  ];
  for (let i = random.below(4); i > 0; i--) out.push(random.pick(choices)());
  if (!out.some((f) => f.startsWith('Host:'))) out.push('Host: localhost');
  return out;
}

/** Writes `bytes`, half-closes a moment later (so a server waiting for a promised body sees its end), and collects the answer. */
function exchange(url: string, bytes: string): Promise<{ text: string; hung: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes, 'latin1'));
    const halfClose = setTimeout(() => socket.end(), 300);
    const deadline = setTimeout(() => {
      socket.destroy();
      resolve({ text, hung: true });
    }, 8000);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(halfClose);
      clearTimeout(deadline);
      resolve({ text, hung: false });
    });
  });
}

/** The final status of one answer (after any interim 1xx), and what is wrong with it, if anything. */
function judged(method: string, answer: { text: string; hung: boolean }, token: string): { status: number; found: string[] } {
  let text = answer.text;
  while (/^HTTP\/1\.1 1\d\d /.test(text)) text = text.slice(text.indexOf('\r\n\r\n') + 4);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
  const found: string[] = [];
  if (answer.hung) found.push('no answer within 8 s');
  else if (status === 0) found.push('no status line');
  if (status >= 500 && ![502, 503, 504].includes(status)) found.push(`status ${status}`);
  if (/\n\s+at .*:\d+:\d+/.test(text)) found.push('a stack trace');
  if (text.includes(token.split('.')[2] ?? token)) found.push('the token came back');
  const headEnd = text.indexOf('\r\n\r\n');
  const head = text.slice(0, headEnd);
  if (status >= 400 && method !== 'HEAD') {
    if (!/^content-type: application\/problem\+json/im.test(head)) found.push('an error that is not problem+json');
    else {
      try {
        const body = JSON.parse(text.slice(headEnd + 4)) as { status?: unknown };
        if (body.status !== status) found.push(`a problem whose status ${String(body.status)} is not ${status}`);
      } catch {
        found.push('a problem body that is not JSON');
      }
    }
  }
  return { status, found };
}

/** Sends `count` seeded hostile requests to `url`, one a connection; what was wrong, and the statuses seen. */
async function hostile(url: string, seed: number, count: number, token: string): Promise<{ bad: string[]; statuses: Set<number> }> {
  const random = new SeededRandom(seed);
  const bad: string[] = [];
  const statuses = new Set<number>();
  for (let i = 0; i < count; i++) {
    const method = random.pick(METHODS);
    const lines = fields(random, token);
    const body =
      ['POST', 'PUT', 'PATCH'].includes(method) && random.next() < 0.7 ? random.pick(['{}', 'garbage', '{"tags":["x"]}', `[${'1,'.repeat(1000)}1]`]) : '';
    if (body !== '' && !lines.some((f) => /^(content-length|transfer-encoding):/i.test(f))) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    const eol = random.next() < 0.05 ? '\n' : '\r\n';
    const bytes = `${method} ${target(random)} ${random.pick(VERSIONS)}${eol}${lines.join(eol)}${eol}Connection: close${eol}${eol}${body}`;
    const answer = await exchange(url, bytes);
    const { status, found } = judged(method, answer, token);
    statuses.add(status);
    if (found.length > 0) bad.push(`${found.join(', ')}\n  sent: ${JSON.stringify(bytes.slice(0, 300))}\n  got: ${JSON.stringify(answer.text.slice(0, 300))}`);
  }
  return { bad, statuses };
}

test(`${REQUESTS} seeded hostile requests through the gateway: a status line each, no 500, errors as problem+json, nothing logged as an error, nothing poisoned`, async () => {
  const { origin, fx } = setup;
  const token = await fx.token();
  const { bad, statuses } = await hostile(fx.gateway.url, 20261126, REQUESTS, token);
  assert.deepEqual(bad, []);
  // The mix reached the cache and the parsers, not only the front door.
  for (const status of [200, 400, 401, 404, 405, 414, 431]) assert.ok(statuses.has(status), `some answer was ${status}: ${[...statuses].join(', ')}`);
  const errors = fx.logs.lines().filter((line) => typeof line.level === 'number' && line.level >= 50);
  assert.deepEqual(errors, []);
  for (const clean of ['/v1/books?q=river', '/v1/books?q=war&limit=5', '/v1/branches']) {
    const through = await fx.get(clean);
    const direct = await request(`${origin.url}${clean}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(through.status, 200, clean);
    assert.deepEqual(JSON.parse(through.body), await direct.body.json(), clean);
  }
});

test(`${REQUESTS / 2} seeded hostile requests to the origin itself: the same answers to the same kinds of input`, async () => {
  const { origin, fx } = setup;
  const { bad } = await hostile(origin.url, 7, REQUESTS / 2, await fx.token());
  assert.deepEqual(bad, []);
});

test('pipelined requests, valid and hostile mixed on one connection, are answered in order, and none after one that closed it', async () => {
  const { origin, fx } = setup;
  const token = await fx.token();
  const random = new SeededRandom(11);
  const valid = (id: string): string =>
    `GET ${random.pick(['/v1/books?q=river', '/v1/books?q=war&limit=3', '/v1/branches', '/v1/books/bk_1'])} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: ${id}\r\n${random.pick(['', 'Accept-Encoding: gzip\r\n', 'Range: bytes=0-5\r\n'])}\r\n`;
  const hostileOnes = [
    (id: string): string => `GET /v1/books?q=a HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Length: 3\r\n\r\nabc`,
    (id: string): string => `GET /v1/books?q=a HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    (id: string): string => `GET /v1/books?q=a HTTP/1.1\r\nX-Request-Id: ${id}\r\n\r\n`,
    (id: string): string => `GET /v1/books?q=a HTTP/1.1\r\nHost: x\r\nHost: y\r\nX-Request-Id: ${id}\r\n\r\n`,
    (id: string): string => `GET /v1/books?q=a HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    (id: string): string => `DELETE /v1/books?q=a HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n\r\n`,
    (id: string): string => `HEAD /v1/books?q=river HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: ${id}\r\n\r\n`,
  ];
  const bad: string[] = [];
  for (const url of [fx.gateway.url, origin.url]) {
    for (let n = 0; n < 30; n++) {
      const ids = Array.from({ length: 2 + random.below(3) }, (_, i) => `pipe-${n}-${i}`);
      const bytes = ids.map((id) => (random.next() < 0.5 ? valid(id) : random.pick(hostileOnes)(id))).join('');
      const answer = await exchange(url, bytes);
      const answered = [...answer.text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)].filter((m) => !(m[1] ?? '').startsWith('1'));
      // A request the parser refused is answered without a request id (no request was made of
      // it); the connection is closed after it, as after any answer that says `connection: close`.
      const order = answered.map((m) => ids.indexOf(/^x-request-id: (\S+)/im.exec(m[2] ?? '')?.[1] ?? ''));
      const known = order.filter((at) => at !== -1);
      const closing = answered.findIndex((m, i) => order[i] === -1 || /^connection: close/im.test(m[2] ?? ''));
      const faults = [
        answer.hung ? 'no end within 8 s' : '',
        answered.length > ids.length ? `${answered.length} answers to ${ids.length} requests` : '',
        known.some((at, i) => i > 0 && at <= (known[i - 1] ?? -1)) ? `answers out of order: ${order.join(',')}` : '',
        closing !== -1 && closing < answered.length - 1 ? `answers after the one that closed the connection: ${order.join(',')}` : '',
        answered.some((m) => Number(m[1]) >= 500) ? 'a 5xx' : '',
      ].filter((f) => f !== '');
      if (faults.length > 0) bad.push(`${url}: ${faults.join(', ')}\n  sent: ${JSON.stringify(bytes.slice(0, 400))}`);
    }
  }
  assert.deepEqual(bad, []);
});
