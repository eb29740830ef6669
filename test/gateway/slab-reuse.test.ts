/**
 * Memory's slabs are written again once emptied (record-slabs.ts), so a body still being sent when
 * its entry goes must not be in one of them: a stalled HTTP/1.1 reader and an HTTP/2 stream with no
 * window hold hits' bodies while every entry they came from is evicted and memory refills; what
 * they read afterwards is byte for byte what the origin sent. In-process, `Tiers#lend` gives a
 * hit's slab back once its HTTP/1.1 answer went to the kernel whole, holds it until the answer
 * closes when it did not, whether read whole or cut, and exposes it for good under an HTTP/2 stream.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect as connectH2, createServer as createH2Server, type Http2Server } from 'node:http2';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PurgeLog } from '../../src/gateway/purge/purge-log.ts';
import { cacheKey, ResponseCache } from '../../src/gateway/store/memory/response-cache.ts';
import { Tiers } from '../../src/gateway/store/tiers.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { freshFacts } from '../support/entry-facts.ts';
import { FRAME, frame, getRequest, PREFACE, RawH2, settings } from '../support/h2-frames.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { SeededRandom } from '../../src/origin/random.ts';

const MIB = 1024 * 1024;

/** A body of about 5 KB that compresses to about half: its records stay in shared slabs, two to a target. */
function bodyOf(target: string): string {
  let seed = 7;
  for (let i = 0; i < target.length; i++) seed = (seed * 31 + target.charCodeAt(i)) >>> 0;
  const random = new SeededRandom(seed);
  const words = Array.from({ length: 700 }, () => random.below(1_000_000).toString(36));
  return JSON.stringify({ results: [{ id: target, words }], next: null });
}

const held = (i: number): string => `/v1/books?q=held-${i}`;
const other = (i: number): string => `/v1/books?q=other-${i}`;

/** Every entry memory holds now is pushed out by new ones, which fill the slabs emptied. */
async function evictAndRefill(fx: GatewayFixture, round: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const target = other(round * 1000 + i);
    const reply = await fx.get(target);
    assert.equal(reply.body, bodyOf(target));
  }
}

interface Setup {
  origin?: FaultOrigin;
  fx?: GatewayFixture;
}

function useGateway(overrides: Record<string, unknown>): Setup {
  const setup: Setup = {};
  before(async () => {
    setup.origin = await startFaultOrigin();
    setup.origin.behave((target) => ({ kind: 'json', body: bodyOf(target) }));
    setup.fx = await startGatewayFixture(setup.origin.url, {
      'gateway.cache.maxBytes': MIB,
      'gateway.cache.admission': false,
      'gateway.cache.disk.enabled': false,
      ...overrides,
    });
  });
  after(async () => {
    await setup.fx?.stop();
    await setup.origin?.close();
  });
  return setup;
}

/** The bodies of `count` HTTP/1.1 answers read whole from `bytes`, with their Content-Length framing. */
function http1Bodies(bytes: Buffer, count: number): string[] {
  const bodies: string[] = [];
  let at = 0;
  while (bodies.length < count) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end === -1) throw new Error(`answer ${bodies.length} has no end of head`);
    const head = bytes.toString('latin1', at, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
    assert.ok(head.startsWith('HTTP/1.1 200'), head.split('\r\n')[0]);
    bodies.push(bytes.toString('utf8', end + 4, end + 4 + length));
    at = end + 4 + length;
  }
  return bodies;
}

describe('HTTP/1.1: a stalled reader', () => {
  const setup = useGateway({});

  test('reads the bodies of hits whose entries were evicted and whose slabs were refilled meanwhile, unchanged', async () => {
    const fx = setup.fx as GatewayFixture;
    const token = await fx.token();
    // Twice each, so that the identity body made on the first ask is kept: the hits send it from the record.
    for (let i = 0; i < 20; i++) for (let ask = 0; ask < 2; ask++) assert.equal((await fx.get(held(i))).body, bodyOf(held(i)));
    const { port } = new URL(fx.gateway.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    const asks = 3000;
    const targets = Array.from({ length: asks }, (_, i) => held(i % 20));
    socket.write(targets.map((target) => `GET ${target} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${token}\r\n\r\n`).join(''));
    // The answers fill the connection's buffers, the kernel's and node:http's, and wait there.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await evictAndRefill(fx, 0);
    const chunks: Buffer[] = [];
    let received = 0;
    const enough = bodyOf(held(0)).length * asks;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= enough) socket.end();
    });
    socket.resume();
    await once(socket, 'close');
    const bodies = http1Bodies(Buffer.concat(chunks), asks);
    bodies.forEach((body, i) => {
      assert.equal(body, bodyOf(targets[i] ?? ''), `answer ${i} (${targets[i]})`);
    });
  });
});

describe('HTTP/2: streams with no window', () => {
  const setup = useGateway({ 'http.h2c': true });

  test('read the bodies of hits whose entries were evicted and whose slabs were refilled meanwhile, unchanged', async () => {
    const fx = setup.fx as GatewayFixture;
    const token = await fx.token();
    for (let i = 0; i < 10; i++) for (let ask = 0; ask < 2; ask++) assert.equal((await fx.get(held(i))).body, bodyOf(held(i)));
    const raw = await RawH2.open(fx.gateway.url, false);
    // SETTINGS_INITIAL_WINDOW_SIZE 0: the answers' heads come, their DATA waits in the session.
    raw.write(Buffer.concat([Buffer.from(PREFACE, 'latin1'), settings([[4, 0]])]));
    const streams = Array.from({ length: 10 }, (_, i) => 2 * i + 1);
    for (const id of streams) raw.write(getRequest(id, held((id - 1) / 2), [['authorization', `Bearer ${token}`]]));
    for (const id of streams) assert.equal(await raw.streamOutcome(id), 'headers');
    await evictAndRefill(fx, 1);
    const update = Buffer.alloc(4);
    update.writeUInt32BE(16 * MIB);
    raw.write(Buffer.concat([frame(FRAME.WINDOW_UPDATE, 0, 0, update), settings([[4, MIB]])]));
    for (const id of streams) {
      await raw.next((f) => f.streamId === id && f.type === FRAME.DATA && (f.flags & 1) === 1);
      const body = Buffer.concat(raw.frames.filter((f) => f.streamId === id && f.type === FRAME.DATA).map((f) => f.payload)).toString('utf8');
      assert.equal(body, bodyOf(held((id - 1) / 2)), `stream ${id}`);
    }
    raw.close();
  });
});

/** A memory of 1 KB answers (plain LRU, no disk tier) and the tiers over it. */
function memoryTiers(): { readonly memory: ResponseCache; readonly tiers: Tiers; keep(i: number): void; slabOf(i: number): Buffer } {
  const purges = new PurgeLog();
  const memory = new ResponseCache({ maxBytes: MIB, maxEntryBytes: MIB, purges, admission: false, codec: new Codec({ gzip: 6, br: 5, zstd: 3 }) });
  const facts = freshFacts(3_600_000, Date.now());
  return {
    memory,
    tiers: new Tiers(memory, undefined, purges),
    keep: (i) => {
      const stored = memory.maker.prepare(200, { 'content-type': 'text/plain' }, answerOf(i), { keep: 'identity', offered: [] }, facts, undefined, [], []);
      memory.put(cacheKey(`/${i}`), stored, { generation: 0, mark: '' });
    },
    // Looked at for good: the slab a new record lands in is then never written again, which the tests allow for.
    slabOf: (i) => memory.get(cacheKey(`/${i}`), {})?.kept.bodyStore ?? Buffer.alloc(0),
  };
}

function answerOf(i: number): Buffer {
  return Buffer.from(`answer ${i} `.padEnd(1000, String.fromCharCode(97 + (i % 26))));
}

async function listening(server: Server | Http2Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Whether any of the next `count` entries, from `from`, lands in `slab`. */
function landsIn(m: ReturnType<typeof memoryTiers>, slab: Buffer, from: number, count: number): boolean {
  let landed = false;
  for (let i = from; i < from + count; i++) {
    m.keep(i);
    if (i % 16 === 0 && m.slabOf(i) === slab) landed = true;
  }
  return landed;
}

describe('Tiers#lend', () => {
  for (const cut of [false, true]) {
    test(`holds a hit's slab until its HTTP/1.1 answer closes (${cut ? 'cut by the client' : 'read whole'}), then it is written again`, async () => {
      const m = memoryTiers();
      // Entry 0's slab full, so that only a slab emptied and written again takes new records.
      for (let i = 0; i < 200; i++) m.keep(i);
      const slab = slab0(m);
      const server = createServer((req, res) => {
        const found = m.tiers.lookup(cacheKey(req.url ?? '/'), {});
        // Asks read once the entry was evicted are answered as a fill would be, from a Buffer of their own.
        if (found.kind !== 'found') {
          res.end(answerOf(0));
          return;
        }
        res.end(found.response.body);
        m.tiers.lend(found, res);
      });
      const port = await listening(server);
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      socket.pause();
      const asks = 4000;
      socket.write('GET /0 HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(asks));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(landsIn(m, slab, 1000, 3000), false, 'the slab is not written while its answers are being sent');
      if (cut) socket.destroy();
      else {
        let received = 0;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received >= asks * 1000) socket.end();
        });
        socket.resume();
        await once(socket, 'close');
      }
      // The server's side of the connection closes, and every answer with it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(landsIn(m, slab, 10_000, 3000), true, 'written again once its answers closed');
      server.close();
    });
  }

  test("gives a hit's slab back as soon as its HTTP/1.1 answer was handed to the kernel whole", async () => {
    const m = memoryTiers();
    for (let i = 0; i < 200; i++) m.keep(i);
    const slab = slab0(m);
    let landed: boolean | undefined;
    const server = createServer((req, res) => {
      const found = m.tiers.lookup(cacheKey('/0'), {});
      if (found.kind !== 'found') throw new Error('entry 0 is not held');
      res.end(found.response.body);
      m.tiers.lend(found, res);
      landed = landsIn(m, slab, 10_000, 3000);
    });
    const port = await listening(server);
    const socket = connect(port, '127.0.0.1');
    socket.write('GET /0 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'close');
    assert.equal(landed, true, 'written again while the answer was still open');
    assert.ok(Buffer.concat(chunks).subarray(-1000).equals(answerOf(0)), 'the answer as it was when sent');
    server.close();
  });

  test("exposes a hit's slab for good under an HTTP/2 stream", async () => {
    const m = memoryTiers();
    for (let i = 0; i < 200; i++) m.keep(i);
    const slab = slab0(m);
    const server = createH2Server();
    server.on('stream', (stream, headers) => {
      const found = m.tiers.lookup(cacheKey(String(headers[':path'])), {});
      if (found.kind !== 'found') return;
      stream.respond({ ':status': 200 });
      stream.end(found.response.body);
      m.tiers.lend(found, stream);
    });
    const port = await listening(server);
    const client = connectH2(`http://127.0.0.1:${port}`);
    const request = client.request({ ':path': '/0' });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(request, 'end');
    assert.deepEqual(Buffer.concat(chunks), answerOf(0));
    client.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(landsIn(m, slab, 1000, 6000), false);
    server.close();
  });
});

/** The slab entry 0's record is in, read without a pin or an exposure (a lookup lent back at once). */
function slab0(m: ReturnType<typeof memoryTiers>): Buffer {
  const found = m.memory.lookup(cacheKey('/0'), {});
  if (found.kind !== 'found' || found.pin === undefined) throw new Error('entry 0 is not held');
  m.memory.unpin(found.pin);
  return found.response.kept.bodyStore;
}
