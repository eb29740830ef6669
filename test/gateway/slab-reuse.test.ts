/**
 * Memory's slabs are written again once emptied (record-slabs.ts), so a body still being sent when
 * its entry goes must not be in one of them: a stalled HTTP/1.1 reader and an HTTP/2 stream with no
 * window hold hits' bodies while every entry they came from is evicted and memory refills; what
 * they read afterwards is byte for byte what the origin sent.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FRAME, frame, getRequest, PREFACE, RawH2, settings } from '../support/h2-frames.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { SeededRandom } from '../../src/origin/random.ts';

const MIB = 1024 * 1024;

/** A body of about 5 KB that compresses to about half: its records stay in shared slabs, two to a target. */
function bodyOf(target: string): string {
  const random = new SeededRandom([...target].reduce((sum, c) => sum * 31 + c.charCodeAt(0), 7) >>> 0);
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
    bodies.forEach((body, i) => assert.equal(body, bodyOf(targets[i] ?? ''), `answer ${i} (${targets[i]})`));
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
