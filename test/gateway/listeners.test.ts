import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect as h2connect, constants, sensitiveHeaders, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Agent, request } from 'undici';
import { tempDir } from '../support/config.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, until } from '../support/harness.ts';
import type { CertificateFiles } from '../../src/cli/local-certificate.ts';
import { LOGGED_PROTO, makeCertificate, PROTOCOLS, protocolOverrides } from '../support/protocols.ts';
import { SlotTable } from '../../src/shared/slot-table.ts';
import { internals } from '../../src/shared/node-http-internals.ts';

const TARGET = '/v1/books?q=listener';

/** The certificate a new TLS handshake with `url` is shown, as its SHA-256 fingerprint. */
function servedFingerprint(url: string, ca: Buffer[]): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, ALPNProtocols: ['h2'] }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

function fingerprintOf(pair: CertificateFiles): string {
  return new X509Certificate(readFileSync(pair.cert)).fingerprint256;
}

/** One GET on an open HTTP/2 session; resolves with the status. */
function h2get(session: ClientHttp2Session, path: string, token: string, fields: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, authorization: `Bearer ${token}`, ...fields });
    let status = 0;
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.on('error', reject);
    stream.resume();
    stream.on('end', () => {
      resolve(status);
    });
  });
}

/** One GET on an open HTTP/2 session; resolves with the answer's header fields once it has ended. */
function h2fields(session: ClientHttp2Session, path: string, token: string): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, authorization: `Bearer ${token}` });
    let fields: IncomingHttpHeaders = {};
    stream.on('response', (headers) => {
      fields = headers;
    });
    stream.on('error', reject);
    stream.resume();
    stream.on('end', () => {
      resolve(fields);
    });
  });
}

/** Replaces a file the way certbot and Kubernetes do: a new file renamed over the old path. */
function replace(from: string, to: string): void {
  copyFileSync(from, `${to}.new`);
  renameSync(`${to}.new`, to);
}

describe('the access log records the protocol', () => {
  let origin: FaultOrigin;
  before(async () => {
    origin = await startFaultOrigin();
  });
  after(async () => {
    await origin.close();
  });

  for (const protocol of PROTOCOLS) {
    test(`over ${protocol}`, async () => {
      const fx = await startGatewayFixture(origin.url, protocolOverrides(protocol));
      try {
        assert.equal((await fx.get(TARGET)).status, 200);
        const line = fx.logs.lines().find((l) => l.msg === 'request');
        assert.equal(line?.proto, LOGGED_PROTO[protocol]);
      } finally {
        await fx.stop();
      }
    });
  }

  test('a TLS client that offers only http/1.1 is served HTTP/1.1 on the same port', async () => {
    const fx = await startGatewayFixture(origin.url, protocolOverrides('h2'));
    const http1 = new Agent({ allowH2: false, connect: { ca: readFileSync(fx.config['http.tls.cert'] ?? '') } });
    try {
      const reply = await request(`${fx.gateway.url}${TARGET}`, { headers: { authorization: `Bearer ${await fx.token()}` }, dispatcher: http1 });
      assert.equal(reply.statusCode, 200);
      await reply.body.dump();
      assert.equal(fx.logs.lines().find((l) => l.msg === 'request')?.proto, 'HTTP/1.1');
    } finally {
      await http1.close();
      await fx.stop();
    }
  });
});

describe('certificates are reloaded without closing a connection', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  let dir: string;
  let live: CertificateFiles;
  let first: CertificateFiles;
  let second: CertificateFiles;
  let ca: Buffer[];
  const reloads = async (result: string): Promise<number> => metricValue(await fx.metrics(), 'catalog_gateway_tls_reloads_total', { result });

  before(async () => {
    origin = await startFaultOrigin();
    dir = tempDir('catalog-rotate-');
    const spare = tempDir('catalog-spare-');
    first = makeCertificate(spare, 'first');
    second = makeCertificate(spare, 'second', 30);
    live = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    copyFileSync(first.cert, live.cert);
    copyFileSync(first.key, live.key);
    ca = [readFileSync(first.cert), readFileSync(second.cert)];
    fx = await startGatewayFixture(origin.url, { 'http.tls.cert': live.cert, 'http.tls.key': live.key });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a rotated pair serves new handshakes while an open connection keeps working', async () => {
    const token = await fx.token();
    const session = h2connect(fx.gateway.url, { ca });
    try {
      assert.equal(await h2get(session, TARGET, token), 200);
      const socket = session.socket;
      assert.equal(await servedFingerprint(fx.gateway.url, ca), fingerprintOf(first));
      const expiryBefore = metricValue(await fx.metrics(), 'catalog_gateway_tls_certificate_expiry_timestamp_seconds');
      replace(second.key, live.key);
      replace(second.cert, live.cert);
      await until(async () => (await reloads('ok')) >= 1);
      assert.equal(await servedFingerprint(fx.gateway.url, ca), fingerprintOf(second));
      assert.equal(await h2get(session, TARGET, token), 200);
      assert.equal(session.socket, socket, 'the same connection');
      assert.ok(
        metricValue(await fx.metrics(), 'catalog_gateway_tls_certificate_expiry_timestamp_seconds') > expiryBefore + 20 * 86_400,
        'the gauge follows the new certificate',
      );
    } finally {
      session.close();
    }
  });

  test('a key that does not match is refused: the metric counts it and the pair in use stays', async () => {
    const inUse = await servedFingerprint(fx.gateway.url, ca);
    const stranger = makeCertificate(tempDir('catalog-stranger-'), 'stranger');
    replace(stranger.key, live.key);
    await until(async () => (await reloads('mismatch')) >= 1);
    assert.equal(await servedFingerprint(fx.gateway.url, ca), inUse);
    const session = h2connect(fx.gateway.url, { ca });
    try {
      assert.equal(await h2get(session, TARGET, await fx.token()), 200, 'a new connection is served');
    } finally {
      session.close();
    }
    const refusal = fx.logs.lines().find((l) => l.msg === 'new certificate refused; the one in use stays');
    assert.equal(refusal?.reason, 'mismatch');
    assert.match(String(refusal.detail), /does not belong to the certificate/);
  });

  test('an expired certificate is refused on SIGHUP', async () => {
    const shortLived = makeCertificate(tempDir('catalog-expired-'), 'short-lived', 1);
    const before = await reloads('expired');
    // Two days on by the gateway's clock, the new certificate has expired and the one in use (30 days) has not.
    fx.clock.advance(2 * 86_400_000);
    // Written in place: the directory watch may see it too, and count it once more.
    copyFileSync(shortLived.cert, live.cert);
    copyFileSync(shortLived.key, live.key);
    process.emit('SIGHUP', 'SIGHUP');
    await until(async () => (await reloads('expired')) > before);
    assert.equal(await servedFingerprint(fx.gateway.url, ca), fingerprintOf(second));
  });

  test('a file written beside the pair, as a log is, does not make the gateway read the pair again', async () => {
    // The pair in the directory now is the expired one of the test before: read again, it would be refused once more.
    const before = await reloads('expired');
    for (let i = 0; i < 5; i++) {
      writeFileSync(join(dir, 'access.log'), `line ${i}\n`, { flag: 'a' });
      await sleep(150);
    }
    await sleep(300);
    assert.equal(await reloads('expired'), before);
  });
});

describe('rapid reset (CVE-2023-44487)', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    fx = await startGatewayFixture(origin.url, { ...protocolOverrides('h2c'), 'http.http2.maxResetsPerSecond': 50 });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a client that opens and cancels streams in a loop gets GOAWAY; a clean client is served throughout', async () => {
    const token = await fx.token();
    const attacker = h2connect(fx.gateway.url);
    attacker.on('error', () => undefined);
    const goaway = new Promise<number>((resolve) =>
      attacker.once('goaway', (code: number) => {
        resolve(code);
      }),
    );
    const clean = h2connect(fx.gateway.url);
    try {
      const attack = (async () => {
        for (let i = 0; i < 1000 && !attacker.closed && !attacker.destroyed; i++) {
          const stream = attacker.request({ ':path': `/v1/books?q=reset${i % 10}`, authorization: `Bearer ${token}` });
          stream.on('error', () => undefined);
          stream.close(constants.NGHTTP2_CANCEL);
          if (i % 20 === 0) await new Promise(setImmediate);
        }
      })();
      const served = Array.from({ length: 50 }, (_, i) => h2get(clean, `/v1/books?q=clean${i % 5}`, token));
      assert.equal(await goaway, constants.NGHTTP2_ENHANCE_YOUR_CALM);
      await attack;
      assert.deepEqual(new Set(await Promise.all(served)), new Set([200]));
      assert.equal(await h2get(clean, TARGET, token), 200, 'the clean connection is still open');
      assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_http2_rapid_reset_total'), 1);
    } finally {
      clean.close();
      attacker.destroy();
    }
  });
});

test("an HTTP/2 connection's streams are kept in slots, not in Node's Map and Set (Node's own with the public API alone), and leave them as they close", async () => {
  const origin = await startFaultOrigin();
  const fx = await startGatewayFixture(origin.url, protocolOverrides('h2c'));
  const session = h2connect(fx.gateway.url);
  // The server's side of each stream, as Node announces it made.
  const sessions = new Set<object>();
  const created = (message: unknown): void => {
    sessions.add((message as { stream: { session: object } }).stream.session);
  };
  subscribe('http2.server.stream.created', created);
  try {
    const token = await fx.token();
    const statuses = await Promise.all(Array.from({ length: 40 }, () => h2get(session, TARGET, token)));
    assert.deepEqual(new Set(statuses), new Set([200]));
    assert.equal(sessions.size, 1);
    const [served] = sessions;
    const state = Object.getOwnPropertySymbols(served).find((s) => s.description === 'state');
    assert.ok(state !== undefined);
    const tables = (served as Record<symbol, { streams: unknown; pendingStreams: unknown } | undefined>)[state];
    assert.ok(tables !== undefined);
    if (internals.streamTable) assert.ok(tables.streams instanceof SlotTable && tables.pendingStreams instanceof SlotTable);
    // Node's own tables are of its internal realm's Map and Set: told by their tag.
    else
      assert.deepEqual(
        [tables.streams, tables.pendingStreams].map((table) => Object.prototype.toString.call(table)),
        ['[object Map]', '[object Set]'],
      );
    const size = (table: unknown): number => (table as { size: number }).size;
    await until(() => Promise.resolve(size(tables.streams) === 0));
    assert.equal(size(tables.pendingStreams), 0);
  } finally {
    unsubscribe('http2.server.stream.created', created);
    session.close();
    await fx.stop();
    await origin.close();
  }
});

test('RFC 9113 §8.3.1: a Host field naming another authority than :authority is a malformed request (400); the same one in another case is not', async () => {
  const origin = await startFaultOrigin();
  const fx = await startGatewayFixture(origin.url, protocolOverrides('h2c'));
  const session = h2connect(fx.gateway.url);
  try {
    const token = await fx.token();
    assert.equal(await h2get(session, TARGET, token, { ':authority': 'catalog.example', host: 'evil.example' }), 400);
    assert.equal(await h2get(session, TARGET, token, { ':authority': 'catalog.example', host: 'Catalog.Example' }), 200);
    assert.equal(await h2get(session, TARGET, token, { ':authority': 'catalog.example' }), 200);
  } finally {
    session.close();
    await fx.stop();
    await origin.close();
  }
});

test('RFC 7541 §6.2.3: X-Request-Id, new on every answer, is sent never indexed, so that it does not push the fields answers repeat out of the HPACK table', async () => {
  const origin = await startFaultOrigin();
  const fx = await startGatewayFixture(origin.url, protocolOverrides('h2c'));
  const session = h2connect(fx.gateway.url);
  try {
    const token = await fx.token();
    // A miss, a hit, and a problem (no route): every kind of answer the gateway writes itself.
    const answers = [await h2fields(session, TARGET, token), await h2fields(session, TARGET, token), await h2fields(session, '/nowhere', token)];
    assert.deepEqual(
      answers.map((a) => a[':status']),
      [200, 200, 404],
    );
    assert.match(String(answers[1]?.['cache-status']), /hit/);
    for (const answer of answers) {
      assert.match(String(answer['x-request-id']), /^[0-9a-f-]{36}$/);
      // The client's HPACK decoder lists the fields that came as literals never indexed.
      assert.deepEqual((answer as Record<symbol, unknown>)[sensitiveHeaders], ['x-request-id']);
    }
  } finally {
    session.close();
    await fx.stop();
    await origin.close();
  }
});

test("RFC 9113 §6.5.2: a header list over http.http2.maxHeaderListBytes is refused with 431 on a connection's first requests too, before the client has acknowledged the setting", async () => {
  const origin = await startFaultOrigin();
  const fx = await startGatewayFixture(origin.url, protocolOverrides('h2c'));
  // Every request sent at once, as a client that does not wait for the server's SETTINGS does.
  const session = h2connect(fx.gateway.url, { maxSendHeaderBlockLength: 1e7 });
  session.on('error', () => undefined);
  try {
    const token = await fx.token();
    const bomb = { 'x-bomb': 'd'.repeat(40_000) };
    // Those sent before the client acknowledged the setting (usually all: they go with the
    // connection preface) get the gateway's 431; any sent after, nghttp2's reset. None is served.
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => h2get(session, TARGET, token, bomb).catch((err: unknown) => (err as { message: string }).message.replace(/.* /, ''))),
    );
    assert.deepEqual(
      outcomes.filter((o) => o !== 431 && o !== 'NGHTTP2_ENHANCE_YOUR_CALM'),
      [],
      outcomes.join(', '),
    );
    assert.equal(origin.count(), 0, 'nothing of them reached the origin');
    assert.equal(await h2get(session, TARGET, token), 200, 'the connection serves requests within the limit');
  } finally {
    session.close();
    await fx.stop();
    await origin.close();
  }
});

test("a TLS client that does not finish its handshake is cut at http.headersTimeoutMs, not at Node's 120 s", async () => {
  const origin = await startFaultOrigin();
  const pair = makeCertificate(tempDir('catalog-handshake-'), 'server');
  const fx = await startGatewayFixture(origin.url, { 'http.tls.cert': pair.cert, 'http.tls.key': pair.key, 'http.headersTimeoutMs': 300 });
  try {
    const { port } = new URL(fx.gateway.url);
    const closed = await new Promise<boolean>((resolve) => {
      // A TCP connection that never sends its ClientHello.
      const socket = connect(Number(port), '127.0.0.1');
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 5000);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.on('error', () => undefined);
    });
    assert.ok(closed, 'the gateway closed the silent connection');
  } finally {
    await fx.stop();
    await origin.close();
  }
});

describe('mutual TLS', () => {
  test('with client certificates required, a client without one is refused at the handshake and one with it is served', async () => {
    const origin = await startFaultOrigin();
    const server = makeCertificate(tempDir('catalog-mtls-'), 'server');
    const client = makeCertificate(tempDir('catalog-mtls-'), 'client');
    const fx = await startGatewayFixture(origin.url, {
      'http.tls.cert': server.cert,
      'http.tls.key': server.key,
      'http.tls.clientCertificates': 'required',
      'http.tls.clientCa': client.cert,
    });
    const ca = readFileSync(server.cert);
    const withCert = new Agent({ connect: { ca, cert: readFileSync(client.cert), key: readFileSync(client.key) } });
    const without = new Agent({ connect: { ca } });
    try {
      const headers = { authorization: `Bearer ${await fx.token()}` };
      const served = await request(`${fx.gateway.url}${TARGET}`, { headers, dispatcher: withCert });
      await served.body.dump();
      assert.equal(served.statusCode, 200);
      await assert.rejects(request(`${fx.gateway.url}${TARGET}`, { headers, dispatcher: without }));
      await until(async () => metricValue(await fx.metrics(), 'catalog_gateway_refused_requests_total', { reason: 'tls-handshake' }) >= 1);
    } finally {
      await withCert.close();
      await without.close();
      await fx.stop();
      await origin.close();
    }
  });
});
