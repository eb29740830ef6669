/**
 * TLS session resumption across the workers of one host (listeners/ticket-keys.ts): a session
 * ticket one worker issued resumes a handshake the other worker takes, still does after the
 * certificate has been reloaded, and stops at the key's rotation, which all workers make at once;
 * with workers on sockets of their own too (workers/reuse-port.ts).
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, renameSync } from 'node:fs';
import { connect as h2connect } from 'node:http2';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { run, type CliProcess } from '../support/cli-process.ts';
import { tempDir } from '../support/config.ts';
import { OK, startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { HEALTH_PATH } from '../support/health-check.ts';
import { get, metricValue, until } from '../support/harness.ts';
import { makeCertificate } from '../support/protocols.ts';

/** Which worker answered, told by whether it holds the marked entry, and whether the handshake resumed. */
interface Visit {
  readonly resumed: boolean;
  readonly holdsMark: boolean;
  /** The ticket the server gave on this connection. */
  readonly ticket: Buffer | undefined;
}

/** A gateway with two workers over TLS, its certificate files where a test can replace them. */
interface TwoWorkers {
  readonly gateway: CliProcess;
  readonly live: { readonly cert: string; readonly key: string };
  /** One new connection, resuming `session` when given, and the mark asked for on it. */
  readonly visit: (session: Buffer | undefined, store?: boolean) => Promise<Visit>;
  /** Visits with `session` until both workers have taken one; returns each worker's visit. */
  readonly visitBoth: (session: Buffer) => Promise<{ holder: Visit; other: Visit }>;
  /** Trusts one more certificate, for after a renewal. */
  readonly trust: (cert: string) => void;
}

function useTwoWorkers(env: Record<string, string> = {}): () => TwoWorkers {
  let origin: FaultOrigin | undefined;
  let started: TwoWorkers | undefined;
  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => OK);
    const dataDir = tempDir();
    const dir = tempDir('catalog-resume-');
    const first = makeCertificate(tempDir('catalog-resume-spare-'), 'first');
    const live = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    copyFileSync(first.cert, live.cert);
    copyFileSync(first.key, live.key);
    let ca = readFileSync(first.cert);
    const gateway = run(['gateway', '--workers', '2', '--origin', origin.url, '--origin-probe', HEALTH_PATH, '--port', '0', '--admin-port', '0'], {
      CATALOG_DATA_DIR: dataDir,
      CATALOG_LOG_LEVEL: 'info',
      CATALOG_GATEWAY_ACCESS_LOG: 'false',
      // A worker is told apart by what its own memory holds: the host's disk tier would hold it for both.
      CATALOG_GATEWAY_CACHE_DISK_ENABLED: 'false',
      CATALOG_HTTP_TLS_CERT: live.cert,
      CATALOG_HTTP_TLS_KEY: live.key,
      ...env,
    });
    const adminUrl = (JSON.parse(await gateway.line((l) => l.includes('"msg":"listening"'))) as { adminUrl: string }).adminUrl;
    const url = (JSON.parse(await gateway.line((l) => l.includes('"msg":"worker listening"'))) as { url: string }).url;
    await until(async () => metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_workers') === 2);
    const token = await mintToken(loadOrCreateSecret(join(dataDir, 'signing-secret')), { subject: 'tester', scope: 'catalog:read', ttlSeconds: 600 });

    /**
     * The mark is asked for with `only-if-cached` (RFC 9111 §5.2.1.7): the worker that stored it
     * answers 200, the other 504 without storing it. `store` asks without it, so that the worker
     * taking the connection stores it.
     */
    const visit = async (session: Buffer | undefined, store = false): Promise<Visit> => {
      const { hostname, port } = new URL(url);
      let socket: TLSSocket | undefined;
      let ticket: Buffer | undefined;
      const client = h2connect(url, {
        createConnection: () => {
          socket = tlsConnect({
            host: hostname,
            port: Number(port),
            ca,
            servername: 'localhost',
            ALPNProtocols: ['h2'],
            ...(session === undefined ? {} : { session }),
          });
          socket.on('session', (s: Buffer) => {
            ticket = s;
          });
          return socket;
        },
      });
      client.on('error', () => undefined);
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const stream = client.request({
            ':path': '/v1/books?q=mark',
            authorization: `Bearer ${token}`,
            ...(store ? {} : { 'cache-control': 'only-if-cached' }),
          });
          let code = 0;
          stream.on('response', (h) => {
            code = Number(h[':status']);
          });
          stream.on('error', reject);
          stream.on('end', () => {
            resolve(code);
          });
          stream.resume();
        });
        // TLS 1.3 sends its tickets after the handshake (none after a resumed one): by the end of an answer they have come.
        if (socket?.isSessionReused() !== true) await until(() => Promise.resolve(ticket !== undefined), 2000);
        assert.ok(status === 200 || status === 504, `status ${status}`);
        return { resumed: socket?.isSessionReused() === true, holdsMark: status === 200, ticket };
      } finally {
        client.close();
      }
    };
    const visitBoth = async (session: Buffer): Promise<{ holder: Visit; other: Visit }> => {
      const seen = new Map<boolean, Visit>();
      for (let i = 0; i < 20 && seen.size < 2; i++) {
        const v = await visit(session);
        seen.set(v.holdsMark, v);
      }
      const holder = seen.get(true);
      const other = seen.get(false);
      assert.ok(holder !== undefined && other !== undefined, 'both workers took a connection');
      return { holder, other };
    };
    started = {
      gateway,
      live,
      visit,
      visitBoth,
      trust: (cert) => {
        ca = Buffer.concat([ca, readFileSync(cert)]);
      },
    };
  });
  after(async () => {
    started?.gateway.child.kill('SIGKILL');
    await origin?.close();
  });
  return () => {
    if (started === undefined) throw new Error('read inside a test');
    return started;
  };
}

describe('TLS session resumption across two workers', () => {
  const workers = useTwoWorkers();

  test('a session one worker issued resumes on a connection the other worker takes, before and after a certificate reload', async () => {
    const { gateway, live, visit, visitBoth, trust } = workers();
    // The mark: stored by whichever worker takes this connection.
    const first = await visit(undefined, true);
    assert.ok(first.ticket !== undefined, 'the server issued a ticket');
    const { holder, other } = await visitBoth(first.ticket);
    assert.ok(holder.resumed, 'resumed on the worker holding the mark');
    assert.ok(other.resumed, 'resumed on the other worker');

    // Both workers reload the certificate (renewed, with a new key); the key that opens tickets stays.
    const renewed = makeCertificate(tempDir('catalog-resume-renewed-'), 'renewed', 30);
    copyFileSync(renewed.key, `${live.key}.new`);
    renameSync(`${live.key}.new`, live.key);
    copyFileSync(renewed.cert, `${live.cert}.new`);
    renameSync(`${live.cert}.new`, live.cert);
    await until(() => Promise.resolve(gateway.seen.filter((l) => l.includes('"msg":"certificate reloaded"')).length >= 2), 10_000);
    trust(renewed.cert);
    const after = await visitBoth(first.ticket);
    assert.ok(after.holder.resumed && after.other.resumed, 'the ticket from before the reload resumes on both workers');
  });
});

describe('TLS session resumption across two workers on sockets of their own (gateway.workerAccept: reuseport)', () => {
  const workers = useTwoWorkers({ CATALOG_GATEWAY_WORKER_ACCEPT: 'reuseport' });

  test('a worker that listens on its own socket gets the host ticket key: a session one worker issued resumes on the other', async () => {
    const { visit, visitBoth } = workers();
    const first = await visit(undefined, true);
    assert.ok(first.ticket !== undefined, 'the server issued a ticket');
    const { holder, other } = await visitBoth(first.ticket);
    assert.ok(holder.resumed && other.resumed, 'resumed on both workers');
  });
});

describe('the ticket key is rotated for all workers at once', () => {
  const ROTATION_MS = 2000;
  const workers = useTwoWorkers({ CATALOG_HTTP_TLS_TICKET_KEY_ROTATION_MS: String(ROTATION_MS) });

  test('past a rotation an old ticket makes a full handshake on either worker, and a new one resumes on both', async () => {
    const { visit, visitBoth } = workers();
    const old = await visit(undefined, true);
    assert.ok(old.ticket !== undefined);
    await sleep(ROTATION_MS + 200);
    const stale = await visitBoth(old.ticket);
    assert.ok(!stale.holder.resumed && !stale.other.resumed, 'the old ticket resumes nowhere');
    const fresh = await visit(undefined);
    assert.ok(fresh.ticket !== undefined);
    const both = await visitBoth(fresh.ticket);
    assert.ok(both.holder.resumed && both.other.resumed, 'the new ticket resumes on both workers');
  });
});
