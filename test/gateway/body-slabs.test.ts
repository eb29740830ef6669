/** The body slabs on their own: holding, dropping and evacuating, and what the waste is held to. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodySlabs, HeldBody, LARGEST_SLABBED, SLAB_BYTES, WASTE_ALLOWED } from '../../src/gateway/store/body-slabs.ts';
import { SeededRandom } from '../../src/origin/random.ts';

function body(length: number, fill: number): Buffer {
  return Buffer.alloc(length, fill);
}

/** A cache's part: holders by name, held while stored, as ResponseCache holds representations. */
class Holder {
  readonly slabs = new BodySlabs();
  readonly held = new Map<string, HeldBody>();

  store(name: string, bytes: Buffer): HeldBody {
    const holder = new HeldBody(bytes);
    this.slabs.hold(holder);
    this.held.set(name, holder);
    return holder;
  }

  evict(name: string): void {
    const holder = this.held.get(name);
    if (holder === undefined) return;
    this.slabs.drop(holder);
    this.held.delete(name);
  }

  tidy(): void {
    if (this.slabs.wasteful) this.slabs.compact();
  }
}

test('a held body is copied into a shared slab and known by its place in it; one already in a slab stays where it is', () => {
  const slabs = new BodySlabs();
  const a = new HeldBody(body(700, 1));
  const b = new HeldBody(body(900, 2));
  slabs.hold(a);
  slabs.hold(b);
  assert.equal(a.bodyStore, b.bodyStore, 'both in one slab');
  assert.equal(a.bodyStore.length, SLAB_BYTES);
  assert.equal(b.bodyOffset, 700);
  assert.deepEqual(a.body, body(700, 1));
  assert.deepEqual(b.body, body(900, 2));
  assert.equal(b.body.buffer, a.body.buffer, 'a body sent is a view of its slab');
  const sharing = new HeldBody(b.body);
  slabs.hold(sharing);
  assert.equal(sharing.bodyStore, b.bodyStore, 'a representation made again from a body sent shares its bytes, held as the slab and a place');
  assert.equal(sharing.bodyOffset, b.bodyOffset);
  assert.equal(slabs.bytes, 1600);
  assert.equal(slabs.live, 2500);
  slabs.drop(a);
  slabs.drop(a);
  assert.equal(slabs.live, 1800, 'each hold is dropped once');
});

test('empty bodies share one view, large ones keep a Buffer of their own with exactly their bytes', () => {
  const slabs = new BodySlabs();
  const empty = [new HeldBody(Buffer.alloc(0)), new HeldBody(Buffer.from(''))];
  for (const holder of empty) slabs.hold(holder);
  assert.equal(empty[0]?.body, empty[1]?.body);
  const pooled = Buffer.from('x'.repeat(LARGEST_SLABBED + 2));
  const large = new HeldBody(pooled.subarray(1));
  slabs.hold(large);
  assert.equal(large.body.buffer.byteLength, LARGEST_SLABBED + 1);
  assert.equal(slabs.bytes, 0);
  assert.equal(slabs.live, 0, 'a Buffer of its own is not counted with the slabs');
});

test('a slab the next body does not fit in is sealed, its tail counted with the slabs', () => {
  const cache = new Holder();
  const size = LARGEST_SLABBED;
  const placed = Array.from({ length: SLAB_BYTES / size }, (_, i) => cache.store(`k${i}`, body(size - 1, i)));
  const next = cache.store('next', body(size, 0xff));
  assert.notEqual(next.body.buffer, placed[0]?.body.buffer);
  assert.equal(cache.slabs.bytes, SLAB_BYTES + size);
  placed.forEach((holder, i) => {
    assert.deepEqual(holder.body, body(size - 1, i), 'earlier bodies are untouched');
  });
});

test('slabs no held body is in are let go of first, without a copy', () => {
  const cache = new Holder();
  const size = 1000;
  const perSlab = Math.floor(SLAB_BYTES / size);
  for (let i = 0; i < 3 * perSlab; i++) cache.store(`k${i}`, body(size, i % 251));
  const place = (holder: HeldBody | undefined): [Buffer | undefined, number | undefined] => [holder?.bodyStore, holder?.bodyOffset];
  const kept = [...cache.held.values()].slice(perSlab).map(place);
  for (let i = 0; i < perSlab; i++) cache.evict(`k${i}`);
  assert.equal(cache.slabs.wasteful, true);
  cache.tidy();
  assert.equal(cache.slabs.bytes, SLAB_BYTES + perSlab * size, 'the first slab is no longer counted (the current one is counted as far as it is used)');
  const now = [...cache.held.values()].map(place);
  assert.equal(now.length, kept.length);
  now.forEach(([store, offset], i) => {
    assert.equal(store, kept[i]?.[0], 'nothing moved');
    assert.equal(offset, kept[i]?.[1]);
  });
});

test('when emptied slabs are not enough, held bodies are copied out of the slabs with the most holes', () => {
  const cache = new Holder();
  const size = 1000;
  const perSlab = Math.floor(SLAB_BYTES / size);
  for (let i = 0; i < 3 * perSlab; i++) cache.store(`k${i}`, body(size, i % 251));
  const first = cache.held.get('k0')?.body.buffer;
  // Most of the first slab goes: its survivors must move, the other slabs stay as they are.
  for (let i = 0; i < perSlab - 5; i++) cache.evict(`k${i}`);
  const untouched = cache.held.get(`k${perSlab}`);
  const untouchedAt = [untouched?.bodyStore, untouched?.bodyOffset];
  assert.equal(cache.slabs.wasteful, true);
  cache.tidy();
  assert.equal(cache.slabs.wasteful, false);
  assert.ok(cache.slabs.bytes - cache.slabs.live <= (WASTE_ALLOWED / 2) * cache.slabs.live);
  for (let i = perSlab - 5; i < perSlab; i++) {
    const moved = cache.held.get(`k${i}`)?.body;
    assert.notEqual(moved?.buffer, first, 'a survivor left the evacuated slab');
    assert.deepEqual(moved, body(size, i % 251), 'with its bytes');
  }
  assert.deepEqual([untouched?.bodyStore, untouched?.bodyOffset], untouchedAt, 'a body in a full slab is not copied');
  assert.equal(cache.slabs.live, (2 * perSlab + 5) * size);
  cache.evict('k0');
  cache.evict(`k${perSlab - 1}`);
  assert.equal(cache.slabs.live, (2 * perSlab + 4) * size, 'a moved body is dropped from the slab it moved to');
});

test('a view still in use keeps its bytes after its slab is evacuated (a socket still writing it)', () => {
  const cache = new Holder();
  const writing = cache.store('k', body(500, 7)).body;
  cache.store('other', body(500, 8));
  cache.evict('other');
  cache.tidy();
  assert.notEqual(cache.held.get('k')?.body.buffer, writing.buffer);
  for (let i = 0; i < 1000; i++) cache.store(`n${i}`, body(500, 9));
  assert.deepEqual(writing, body(500, 7), 'the old slab is never written again');
});

test('under churn the slabs stay within the allowance and every held body keeps its bytes', () => {
  const cache = new Holder();
  const expected = new Map<string, number>();
  const seeded = new SeededRandom(1);
  const random = (n: number): number => seeded.below(n);
  for (let i = 0; i < 40_000; i++) {
    // Skewed: low names come back far more often, so hot bodies pin old slabs.
    const name = `k${Math.min(random(3000), random(3000))}`;
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
  for (const [name, holder] of cache.held) {
    live += holder.body.length;
    assert.ok(holder.body.every((byte) => byte === expected.get(name)));
  }
  assert.equal(cache.slabs.live, live);
});
