/**
 * Hostile requests and greedy clients against a real gateway (and, where the rule is shared, the
 * origin): strict framing, credentials in the target, slow clients, many idle connections, rate
 * limits, and the drain.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../support/config.ts';
import { streamEndlessBody } from '../support/endless-body.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, rawExchange, until } from '../support/harness.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

const statusOf = (response: string): number => Number(response.split(' ')[1]);
const typeOf = (response: string): string => (JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { type: string }).type;

describe('strict framing and credentials, on both servers', () => {
  let origin: OriginFixture;
  let fx: GatewayFixture;
  let token = '';

  before(async () => {
    origin = await startOriginFixture();
    fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir });
    token = await fx.token();
  });
  after(async () => {
    await fx.stop();
    await origin.stop();
  });

  const servers = (): [string, string][] => [
    ['gateway', fx.gateway.url],
    ['origin', origin.origin.url],
  ];

  test('two Host fields, two Authorization fields, none on HTTP/1.1, a Host that is no host and port, a transfer coding other than chunked, a fragment, a target neither a path nor an http(s) URL: 400 problems that close the connection', async () => {
    const cases = [
      `GET /v1/branches HTTP/1.1\r\nHost: a\r\nHost: b\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `GET /v1/branches HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nauthorization: Bearer ${token}\r\n\r\n`,
      `GET /v1/branches HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nAUTHORIZATION: Bearer junk\r\n\r\n`,
      ...['a/evil', 'user@a', 'a b', 'a:port', '[::1'].map((host) => `GET /v1/branches HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`),
      `GET /v1/branches HTTP/1.1\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `POST /v1/loans HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `GET /v1/books?q=dune#frag HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      ...['OPTIONS *', 'GET *', 'GET ftp://a/v1/branches'].map((line) => `${line} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`),
    ];
    for (const [name, url] of servers()) {
      for (const request of cases) {
        const response = await rawExchange(url, request);
        assert.equal(statusOf(response), 400, `${name}: ${request.split('\r\n')[0] ?? ''} → ${response.slice(0, 200)}`);
        assert.equal(typeOf(response), 'https://catalog.example/problems/malformed-request');
        assert.match(response, /\r\nconnection: close\r\n/i, name);
      }
      const ten = await rawExchange(url, `GET /v1/branches HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      assert.equal(statusOf(ten), 200, `${name}: HTTP/1.0 needs no Host`);
      for (const request of cases.map((c) => c.replace(/\/v1\/[a-z]+/, '/healthz'))) {
        const admin = await rawExchange(name === 'gateway' ? fx.gateway.adminUrl : origin.origin.adminUrl, request);
        assert.equal(statusOf(admin), 400, `${name} admin: ${request.split('\r\n')[0] ?? ''} → ${admin.slice(0, 200)}`);
        assert.match(admin, /\r\nconnection: close\r\n/i, name);
      }
      for (const host of ['', 'catalog.example:8080', '127.0.0.1', '[::1]:80', 'xn--bcher-kva.example']) {
        const fine = await rawExchange(url, `GET /v1/branches HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
        assert.equal(statusOf(fine), 200, `${name}: Host: ${host}`);
      }
    }
  });

  test('a refused request whose body is left unread closes the connection, on every listener of both servers', async () => {
    const refusals: [string, string, number][] = [
      [fx.gateway.url, '/v1/books', 405],
      [origin.origin.url, '/v1/books', 405],
      [fx.gateway.adminUrl, '/purge', 401],
      // Read up to the receiver's 64 KiB bound first, then refused.
      [fx.gateway.adminUrl, '/events', 413],
    ];
    for (const [url, target, status] of refusals) {
      const streamed = await streamEndlessBody(url, target, {});
      assert.match(streamed.head, new RegExp(`^HTTP/1.1 ${status} `), `${url}${target}: ${streamed.head}`);
      assert.match(streamed.head, /\r\nconnection: close\r\n/i, `${url}${target}`);
      assert.ok(streamed.closed, `${url}${target} was still reading after ${streamed.sentBytes} bytes`);
    }
  });

  test('a token in the query is refused, and written nowhere: not in the problem, the access log or the error log', async () => {
    const secret = 'SECRET-query-token-value';
    const entries = fx.gateway.cacheStats().entries;
    for (const [name, url] of servers()) {
      for (const target of [`/v1/books?q=x&access_token=${secret}`, `/v1/books?q=x&ACCESS%5FTOKEN=${secret}`, `/v1/unknown?access_token=${secret}`]) {
        const reply = await get(`${url}${target}`);
        assert.equal(reply.status, 400, `${name} ${target}`);
        assert.equal((JSON.parse(reply.body) as { type: string }).type, 'https://catalog.example/problems/credentials-in-target');
        assert.ok(!reply.body.includes(secret), `${name}: the problem echoes the token: ${reply.body}`);
        assert.match(reply.body, /REDACTED/);
      }
    }
    assert.equal(fx.gateway.cacheStats().entries, entries, 'nothing was stored for them');
    const logs = JSON.stringify([...fx.logs.lines(), ...origin.logs.lines()]);
    assert.ok(logs.includes('REDACTED'), 'the refused requests were logged');
    assert.ok(!logs.includes(secret), 'a log line holds the token');
  });

  test('an expectation other than 100-continue gets a 417 problem, counted as a refused request', async () => {
    for (const [name, url] of servers()) {
      const response = await rawExchange(url, `GET /v1/branches HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      assert.equal(statusOf(response), 417, `${name}: ${response.slice(0, 200)}`);
      assert.equal(typeOf(response), 'https://catalog.example/problems/expectation-failed');
      assert.match(response, /\r\ncontent-type: application\/problem\+json\r\n/i, name);
    }
    assert.ok(
      fx.logs.lines().some((l) => JSON.stringify(l).includes('"reason":"expectation"')),
      'the refusal is logged',
    );
  });

  test('a user name and password in an absolute-form target are refused, and written nowhere', async () => {
    const secret = 'S3CR3T-userinfo-password';
    for (const [name, url] of servers()) {
      const host = new URL(url).host;
      for (const target of [
        `http://user:${secret}@${host}/v1/branches`,
        `http://user:${secret}@${host}/v1/nothing?q=x`,
        `HTTP://${secret}@${host}/v1/books?q=x`,
      ]) {
        const response = await rawExchange(url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
        assert.equal(statusOf(response), 400, `${name} ${target}: ${response.slice(0, 200)}`);
        assert.equal(typeOf(response), 'https://catalog.example/problems/credentials-in-target');
        assert.ok(!response.includes(secret), `${name}: the problem echoes the password: ${response}`);
        assert.match(response, /REDACTED@/);
      }
    }
    const logs = JSON.stringify([...fx.logs.lines(), ...origin.logs.lines()]);
    assert.ok(logs.includes('REDACTED@'), 'the refused requests were logged');
    assert.ok(!logs.includes(secret), 'a log line holds the password');
  });

  test('a request refused by the parser behind one still being answered leaves that answer whole, then the connection closes', async () => {
    const word = `pipelined${Date.now()}`;
    const good = `GET /v1/books?q=${word} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const bad = 'GET /v1/branches HTTP/1.1\r\nHost: a\r\nBad Header: y\r\n\r\n';
    const response = await rawExchange(fx.gateway.url, good + bad, 5000);
    assert.match(response, /^HTTP\/1\.1 200 /, response.slice(0, 300));
    assert.match(response, /"results":\[/, 'the search answer is whole');
    assert.equal(response.match(/^HTTP\/1\.1 \d{3}/gm)?.length, 1, 'no answer was written for the refused request');
    assert.match(response, /\r\nconnection: close\r\n/i);
  });

  test('requests the parser refuses are logged with a redacted excerpt and counted', async () => {
    const secret = 'SECRET-in-a-broken-request';
    const response = await rawExchange(
      fx.gateway.url,
      `GET /v1/books?access_token=${secret} HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`,
    );
    assert.equal(statusOf(response), 400);
    const line = fx.logs
      .lines()
      .map((l) => JSON.stringify(l))
      .findLast((l) => l.includes('refused before parsing'));
    assert.ok(line !== undefined, 'the refusal is logged');
    assert.ok(!line.includes(secret));
    assert.match(line, /"method":"GET"/);
    assert.ok(metricValue(await fx.metrics(), 'catalog_gateway_refused_requests_total') >= 1);
  });
});

describe('slow and greedy clients', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;

  before(async () => {
    origin = await startScriptedOrigin((_req, res) => {
      res.setHeader('cache-control', 'public, max-age=60');
      res.end('{}');
    });
    fx = await startGatewayFixture(origin.url, {
      'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'required' }],
      'http.headersTimeoutMs': 300,
      'gateway.rateLimit.perTokenPerSecond': 2,
      'gateway.rateLimit.perTokenBurst': 5,
    });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a client sending its headers a byte at a time is cut after headersTimeoutMs with 408', async () => {
    const { hostname, port } = new URL(fx.gateway.url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = once(socket, 'close');
    const started = performance.now();
    const drip = setInterval(() => socket.write('X'), 50);
    socket.write('GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ');
    await closed;
    clearInterval(drip);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 3000, `cut after ${Math.round(elapsed)} ms`);
    assert.equal(statusOf(received), 408);
  });

  test('a flood from one token gets 429 with Retry-After and RateLimit fields, while another token is served', async () => {
    const flooder = { authorization: `Bearer ${await fx.token()}` };
    const replies = await Promise.all(Array.from({ length: 20 }, () => get(`${fx.gateway.url}/hit`, flooder)));
    const limited = replies.filter((r) => r.status === 429);
    assert.ok(limited.length >= 10, `${limited.length} of 20 limited`);
    assert.ok(replies.filter((r) => r.status === 200).length >= 5, 'the burst is served');
    const [first] = limited;
    assert.ok(first !== undefined);
    assert.match(String(first.headers['retry-after']), /^[1-9][0-9]*$/);
    assert.match(String(first.headers['ratelimit-policy']), /^"per-token";q=5;w=3$/);
    assert.match(String(first.headers.ratelimit), /^"per-token";r=0;t=[0-9]+$/);
    const other = await get(`${fx.gateway.url}/hit`, {
      authorization: `Bearer ${await (async () => {
        const { loadOrCreateSecret, mintToken, secretPath } = await import('../../src/shared/signing-key.ts');
        return mintToken(loadOrCreateSecret(secretPath(fx.config)), { subject: 'someone else', scope: 'catalog:read', ttlSeconds: 60 });
      })()}`,
    });
    assert.equal(other.status, 200);
  });
});

test('a flood from one address gets 429 before authentication, while another address is served', async () => {
  const origin = await startScriptedOrigin((_req, res) => res.end('{}'));
  const fx = await startGatewayFixture(origin.url, {
    'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }],
    'gateway.rateLimit.perIpPerSecond': 1,
    'gateway.rateLimit.perIpBurst': 3,
  });
  try {
    const replies = await Promise.all(Array.from({ length: 10 }, () => get(`${fx.gateway.url}/a`)));
    assert.equal(replies.filter((r) => r.status === 200).length, 3);
    const limited = replies.find((r) => r.status === 429);
    assert.match(String(limited?.headers['ratelimit-policy']), /^"per-address";q=3;w=3$/);
    const { hostname, port } = new URL(fx.gateway.url);
    const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.2' });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write('GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    await once(socket, 'close');
    assert.equal(statusOf(answer), 200, answer);
  } finally {
    await fx.stop();
    await origin.close();
  }
});

test('10 000 idle connections do not stop a new client from being served', async () => {
  const origin = await startScriptedOrigin((_req, res) => res.end('{}'));
  const child = spawn('node_modules/.bin/node', ['bin/catalog-gateway.js', 'gateway', '--port', '0', '--admin-port', '0', '--origin', origin.url], {
    env: {
      ...process.env,
      CATALOG_DATA_DIR: tempDir(),
      CATALOG_LOG_LEVEL: 'info',
      CATALOG_GATEWAY_ACCESS_LOG: 'false',
      CATALOG_GATEWAY_ROUTES: JSON.stringify([{ prefix: '/', mode: 'http', auth: 'off' }]),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const sockets: Socket[] = [];
  try {
    let url = '';
    for await (const line of createInterface({ input: child.stdout })) {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'listening') {
        url = entry.url ?? '';
        break;
      }
    }
    const { hostname, port } = new URL(url);
    for (let i = 0; i < 10_000; i += 500) {
      const batch = Array.from({ length: 500 }, () => connect(Number(port), hostname));
      sockets.push(...batch);
      await Promise.all(batch.map((s) => once(s, 'connect')));
    }
    const reply = await get(`${url}/fresh`);
    assert.equal(reply.status, 200);
    assert.ok(sockets.filter((s) => !s.destroyed).length > 9000, 'the idle connections were still open');
  } finally {
    for (const socket of sockets) socket.destroy();
    child.kill('SIGTERM');
    await once(child, 'exit');
    await origin.close();
  }
});

test('a client that goes away before its answer is logged as 499 with no bytes, not as the answer it never got', async () => {
  let release: () => void = () => undefined;
  const origin = await startScriptedOrigin((_req, res) => {
    release = () => res.end('{"late":true}');
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
  try {
    const gone = new AbortController();
    const pending = get(`${fx.gateway.url}/abandoned`, {}, 'GET', gone.signal).catch(() => undefined);
    await until(() => Promise.resolve(origin.count('/abandoned') === 1));
    gone.abort();
    await pending;
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await until(() => Promise.resolve(fx.logs.lines().some((l) => l.path === '/abandoned')));
    const line = fx.logs.lines().find((l) => l.path === '/abandoned');
    assert.ok(line !== undefined);
    assert.equal(line.status, 499);
    assert.equal(line.bytes, 0);
  } finally {
    await fx.stop();
    await origin.close();
  }
});

describe('the drain', () => {
  test('an answer in flight when SIGTERM comes finishes, with Connection: close, and is logged as sent', async () => {
    let release: () => void = () => undefined;
    const origin = await startScriptedOrigin((_req, res) => {
      release = () => res.end('{"late":true}');
    });
    const fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
    const pending = get(`${fx.gateway.url}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopped = fx.stop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const reply = await pending;
    await stopped;
    await origin.close();
    assert.equal(reply.status, 200, reply.body);
    assert.equal(reply.headers.connection, 'close');
    assert.ok(fx.logs.lines().some((l) => l.path === '/slow' && l.status === 200));
  });
});
