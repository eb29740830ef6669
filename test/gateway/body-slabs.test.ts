/** The body slabs on their own: placing, holding and evacuating, and what the waste is held to. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodySlabs, LARGEST_SLABBED, SLAB_BYTES, WASTE_ALLOWED } from '../../src/gateway/store/body-slabs.ts';

function body(length: number, fill: number): Buffer {
  return Buffer.alloc(length, fill);
}

/** A cache's view of the slabs: its held bodies by name, walked as ResponseCache walks its entries. */
class Holder {
  readonly slabs = new BodySlabs();
  readonly held = new Map<string, Buffer>();

  store(name: string, bytes: Buffer): Buffer {
    const placed = this.slabs.place(bytes);
    this.slabs.hold(placed);
    this.held.set(name, placed);
    return placed;
  }

  evict(name: string): void {
    const placed = this.held.get(name);
    if (placed === undefined) return;
    this.slabs.drop(placed);
    this.held.delete(name);
  }

  tidy(): void {
    if (!this.slabs.wasteful) return;
    this.slabs.compact((move) => {
      for (const [name, placed] of this.held) this.held.set(name, move(placed));
    });
  }
}

test('a body is copied into a shared slab and kept as a view of it; a placed body stays where it is', () => {
  const slabs = new BodySlabs();
  const a = slabs.place(body(700, 1));
  const b = slabs.place(body(900, 2));
  assert.equal(a.buffer, b.buffer, 'both in one slab');
  assert.equal(a.buffer.byteLength, SLAB_BYTES);
  assert.deepEqual(a, body(700, 1));
  assert.deepEqual(b, body(900, 2));
  assert.equal(slabs.place(a), a);
  assert.equal(slabs.bytes, 1600);
});

test('empty bodies share one view, large ones keep a Buffer of their own with exactly their bytes', () => {
  const slabs = new BodySlabs();
  assert.equal(slabs.place(Buffer.alloc(0)), slabs.place(Buffer.from('')));
  const pooled = Buffer.from('x'.repeat(LARGEST_SLABBED + 2));
  const large = slabs.place(pooled.subarray(1));
  assert.equal(large.buffer.byteLength, LARGEST_SLABBED + 1);
  assert.equal(slabs.bytes, 0);
  slabs.hold(large);
  assert.equal(slabs.live, 0, 'a Buffer of its own is not counted with the slabs');
});

test('a slab the next body does not fit in is sealed, its tail counted with the slabs', () => {
  const slabs = new BodySlabs();
  const size = LARGEST_SLABBED;
  const placed = Array.from({ length: SLAB_BYTES / size }, (_, i) => slabs.place(body(size - 1, i)));
  const next = slabs.place(body(size, 0xff));
  assert.notEqual(next.buffer, placed[0]?.buffer);
  assert.equal(slabs.bytes, SLAB_BYTES + size);
  placed.forEach((view, i) => {
    assert.deepEqual(view, body(size - 1, i), 'earlier bodies are untouched');
  });
});

test('waste beyond the allowance is evacuated: held bodies are copied out of the slabs with the most holes', () => {
  const cache = new Holder();
  const size = 1000;
  const perSlab = Math.floor(SLAB_BYTES / size);
  for (let i = 0; i < 3 * perSlab; i++) cache.store(`k${i}`, body(size, i % 251));
  const first = cache.held.get('k0')?.buffer;
  // Most of the first slab goes: its survivors must move, the other slabs stay as they are.
  for (let i = 0; i < perSlab - 5; i++) cache.evict(`k${i}`);
  const untouched = cache.held.get(`k${perSlab}`);
  assert.equal(cache.slabs.wasteful, true);
  cache.tidy();
  assert.equal(cache.slabs.wasteful, false);
  assert.ok(cache.slabs.bytes - cache.slabs.live <= (WASTE_ALLOWED / 2) * cache.slabs.live);
  for (let i = perSlab - 5; i < perSlab; i++) {
    const moved = cache.held.get(`k${i}`);
    assert.notEqual(moved?.buffer, first, 'a survivor left the evacuated slab');
    assert.deepEqual(moved, body(size, i % 251), 'with its bytes');
  }
  assert.equal(cache.held.get(`k${perSlab}`), untouched, 'a body in a full slab is not copied');
  assert.equal(cache.slabs.live, (2 * perSlab + 5) * size);
});

test('a view still in use keeps its bytes after its slab is evacuated (a socket still writing it)', () => {
  const cache = new Holder();
  const writing = cache.store('k', body(500, 7));
  cache.store('other', body(500, 8));
  cache.evict('other');
  cache.tidy();
  assert.notEqual(cache.held.get('k')?.buffer, writing.buffer);
  for (let i = 0; i < 1000; i++) cache.slabs.place(body(500, 9));
  assert.deepEqual(writing, body(500, 7), 'the old slab is never written again');
});

test('under churn the slabs stay within the allowance and every held body keeps its bytes', () => {
  const cache = new Holder();
  const expected = new Map<string, number>();
  let seed = 1;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 40_000; i++) {
    const name = `k${random(3000)}`;
    cache.evict(name);
    const fill = random(256);
    cache.store(name, body(200 + random(3000), fill));
    expected.set(name, fill);
    if (random(4) === 0) {
      const gone = `k${random(3000)}`;
      cache.evict(gone);
      expected.delete(gone);
    }
    cache.tidy();
    assert.ok(cache.slabs.bytes - cache.slabs.live <= WASTE_ALLOWED * cache.slabs.live);
  }
  let live = 0;
  for (const [name, placed] of cache.held) {
    live += placed.length;
    assert.ok(placed.every((byte) => byte === expected.get(name)));
  }
  assert.equal(cache.slabs.live, live);
});
