/**
 * The listener's open connections (listeners/closed-connections.ts): a closed TLS connection's
 * sockets keep no listeners, every 'close' listener still hears the close, and a drain's deadline
 * closes what is still open.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { OpenConnections } from '../../src/gateway/listeners/closed-connections.ts';
import { tempDir } from '../support/config.ts';
import { makeCertificate } from '../support/protocols.ts';

describe('open connections', () => {
  const pair = makeCertificate(tempDir('catalog-closed-'));
  const ca = readFileSync(pair.cert);
  const connections = new OpenConnections();
  const accepted: Socket[] = [];
  const secured: TLSSocket[] = [];
  /** Each socket's close as a listener added after the connection's own heard it. */
  const closes = new Map<Socket, Promise<unknown>>();
  let server: Server;
  let port = 0;

  before(async () => {
    server = createServer({ cert: readFileSync(pair.cert), key: readFileSync(pair.key) }, (_req, res) => {
      res.end('answer');
    });
    server.on('connection', (socket: Socket) => {
      accepted.push(socket);
      connections.accepted(socket);
      closes.set(socket, once(socket, 'close'));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      secured.push(socket);
      connections.secured(socket);
      closes.set(socket, once(socket, 'close'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  after(() => {
    server.close();
  });

  test('a closed TLS connection leaves its TLS socket and the TCP socket under it without listeners, after every listener heard the close', async () => {
    accepted.length = 0;
    secured.length = 0;
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', ca, agent: false, headers: { connection: 'close' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          resolve(text);
        });
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'answer');
    const [tcp] = accepted;
    const [tls] = secured;
    assert.ok(tcp !== undefined && tls !== undefined);
    // Listeners added after the connection's own: removing them all must not keep these from the close.
    await Promise.all([closes.get(tls), closes.get(tcp)]);
    assert.deepEqual(tls.eventNames(), []);
    assert.deepEqual(tcp.eventNames(), []);
  });

  test('destroyAll closes the connections still open, and only those', async () => {
    accepted.length = 0;
    const client = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    await once(client, 'secureConnect');
    const [tcp] = accepted;
    assert.ok(tcp !== undefined);
    assert.ok(!tcp.destroyed);
    const closed = once(client, 'close');
    connections.destroyAll();
    await closed;
    assert.ok(tcp.destroyed);
  });
});
