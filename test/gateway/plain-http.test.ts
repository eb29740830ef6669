import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { localCertificate } from '../../src/cli/local-certificate.ts';
import { tempDir } from '../support/config.ts';
import { startFaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, rawExchange } from '../support/harness.ts';
import { makeCertificate } from '../support/protocols.ts';

test('a TLS listener answers plain HTTP/1.1 with a 400 problem saying to use https, and still serves TLS', async (t) => {
  const origin = await startFaultOrigin();
  t.after(() => origin.close());
  const pair = makeCertificate(tempDir('catalog-plain-'));
  const fx = await startGatewayFixture(origin.url, { 'http.tls.cert': pair.cert, 'http.tls.key': pair.key });
  t.after(() => fx.stop());
  const cleartext = fx.gateway.url.replace('https://', 'http://');
  const answer = await rawExchange(cleartext, 'GET /v1/books?q=plain HTTP/1.1\r\nHost: localhost\r\n\r\n');
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 400 Plain HTTP request sent to an HTTPS port\r\n/);
  assert.match(head, /\r\ncontent-type: application\/problem\+json\r\n/);
  assert.match(head, /\r\nconnection: close/);
  const problem = JSON.parse(body) as { type: string; status: number; detail: string };
  assert.equal(problem.type, 'https://catalog.example/problems/plain-http-to-https');
  assert.equal(problem.status, 400);
  assert.match(problem.detail, /https:\/\//);
  assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_refused_requests_total', { reason: 'plain-http' }), 1);
  // OpenSSL knows GET, POST, HEAD, PUT and CONNECT by their first bytes.
  const posted = await rawExchange(cleartext, 'POST /v1/purge HTTP/1.1\r\nHost: localhost\r\ncontent-length: 0\r\n\r\n');
  assert.match(posted, /^HTTP\/1\.1 400 Plain HTTP request sent to an HTTPS port\r\n/);
  assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_refused_requests_total', { reason: 'plain-http' }), 2);
  // The same port still speaks TLS, HTTP/2 and HTTP/1.1 alike.
  assert.equal((await fx.get('/v1/books?q=plain')).status, 200);
  assert.equal(origin.count(), 1, 'the cleartext request reached nothing');
});

test("`start --tls`'s certificate names the address the gateway listens on, and no other", () => {
  const cert = new X509Certificate(readFileSync(localCertificate(tempDir('catalog-local-tls-'), '127.0.0.1').cert));
  assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(cert.checkHost('localhost'), 'localhost');
  assert.equal(cert.checkIP('::1'), undefined, 'not an address it does not listen on');
  const both = new X509Certificate(readFileSync(localCertificate(tempDir('catalog-local-tls-'), '::').cert));
  assert.equal(both.checkIP('::1'), '::1');
  assert.equal(both.checkIP('127.0.0.1'), '127.0.0.1');
});
