/**
 * No token, wherever a client puts it, comes back out: every log line of both servers, both
 * `/metrics`, and every response (status line, fields, body) are searched for the tokens sent.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, rawExchange } from '../support/harness.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

let origin: OriginFixture;
let fx: GatewayFixture;
before(async () => {
  origin = await startOriginFixture();
  fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir });
});
after(async () => {
  await fx.stop();
  await origin.stop();
});

test('tokens in headers, queries, fragments, cookies and broken requests appear in no output', async () => {
  const valid = await fx.token();
  const expired = await fx.token().then(() => origin.token({ ttlSeconds: 1 }));
  origin.clock.advance(5000);
  const tokens = [valid, expired, 'opaque-secret-token-value', 'eyJhbGciOiJIUzI1NiJ9.forged-payload.forged-signature'];
  const outputs: string[] = [];
  const record = async (url: string, init: Parameters<typeof request>[1] = {}): Promise<void> => {
    const res = await request(url, init);
    outputs.push(JSON.stringify(res.headers), await res.body.text());
  };
  for (const base of [fx.gateway.url, origin.origin.url]) {
    for (const token of tokens) {
      await record(`${base}/v1/books?q=river`, { headers: { authorization: `Bearer ${token}` } });
      await record(`${base}/v1/books?q=river&limit=0`, { headers: { authorization: `Bearer ${token}` } });
      await record(`${base}/v1/nowhere`, { headers: { authorization: `Bearer ${token}` } });
      await record(`${base}/v1/books?q=river&access_token=${token}`);
      await record(`${base}/v1/books?access_token=${encodeURIComponent(token)}&q=x`, { headers: { authorization: `Bearer ${token}` } });
      await record(`${base}/v1/books?q=river`, { headers: { authorization: `Basic ${token}` } });
      await record(`${base}/v1/books?q=river`, {
        headers: { cookie: `session=${token}`, ...(token.split('.').length === 3 ? { 'x-request-id': token, 'user-agent': `curl/8.0 ${token}` } : {}) },
      });
      await record(`${base}/v1/loans`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ book: token, branch: token }),
      });
      outputs.push(await rawExchange(base, `GET /v1/books?q=x#access_token=${token} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`));
      outputs.push(await rawExchange(base, `GET /v1/books?access_token=${token} HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`));
      outputs.push(await rawExchange(base, `GET /v1/books?q=x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    }
  }
  outputs.push((await get(`${fx.gateway.adminUrl}/metrics`)).body, (await get(`${origin.origin.adminUrl}/metrics`)).body);
  outputs.push(JSON.stringify(fx.logs.lines()), JSON.stringify(origin.logs.lines()));
  const everything = outputs.join('\n');
  assert.ok(everything.includes('REDACTED'), 'the query tokens were seen and redacted');
  for (const token of tokens) {
    const at = everything.indexOf(token);
    assert.ok(at === -1, `a token came back out: ${everything.slice(Math.max(0, at - 300), at + 40)}`);
    for (const part of token.split('.').filter((p) => p.length > 16)) assert.ok(!everything.includes(part), 'a part of a token came back out');
  }
});
