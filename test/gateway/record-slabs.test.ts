/** The memory tier's slabs: records kept by handle outside the heap, holes let go of or evacuated, bytes never changed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRAME_BYTES, LARGEST_SLABBED, LEAST_WASTE_ALLOWED, RecordSlabs, SLAB_BYTES, WASTE_ALLOWED } from '../../src/gateway/store/record-slabs.ts';
import { SeededRandom } from '../../src/origin/random.ts';

function bytes(length: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff));
}

/** Keeps `record` and returns its handle. */
function keep(slabs: RecordSlabs, record: Buffer): number {
  const handle = slabs.reserve(record.length);
  record.copy(slabs.store(handle), slabs.offset(handle));
  return handle;
}

function read(slabs: RecordSlabs, handle: number): Buffer {
  const at = slabs.offset(handle);
  return slabs.store(handle).subarray(at, at + slabs.length(handle));
}

test('records share a slab, each framed, and a large one gets a slab of exactly its size', () => {
  const slabs = new RecordSlabs();
  const a = keep(slabs, bytes(700, 1));
  const b = keep(slabs, bytes(900, 2));
  assert.equal(slabs.store(a), slabs.store(b), 'small records share a slab');
  assert.equal(slabs.offset(b), slabs.offset(a) + 700 + FRAME_BYTES);
  assert.deepEqual(read(slabs, a), bytes(700, 1));
  assert.deepEqual(read(slabs, b), bytes(900, 2));
  const large = keep(slabs, bytes(LARGEST_SLABBED, 3));
  assert.equal(slabs.store(large).length, LARGEST_SLABBED + FRAME_BYTES);
  assert.equal(slabs.bytes, 700 + 900 + 2 * FRAME_BYTES + LARGEST_SLABBED + FRAME_BYTES, 'the current slab counts what is written of it');
  assert.equal(slabs.records, 3);
});

test('a released handle names the next record, and a slab whose records are all released goes without a copy', () => {
  const slabs = new RecordSlabs();
  const fill = Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES));
  const first = Array.from({ length: fill }, (_, i) => keep(slabs, bytes(1000, i)));
  const next = keep(slabs, bytes(1000, 99));
  assert.notEqual(slabs.store(next), slabs.store(first[0] ?? 0), 'a record the slab has no room for begins the next');
  const before = slabs.bytes;
  for (const handle of first) slabs.release(handle);
  assert.equal(slabs.bytes, before - SLAB_BYTES, 'the emptied slab is no longer counted');
  assert.equal(keep(slabs, bytes(10, 5)), first.at(-1), 'the last handle released is given out first');
  assert.deepEqual(read(slabs, next), bytes(1000, 99));
});

test('the slabs with the most holes are evacuated; a view still in use keeps its bytes (a socket still writing it)', () => {
  const slabs = new RecordSlabs();
  const handles = Array.from({ length: 600 }, (_, i) => keep(slabs, bytes(500, i)));
  const survivor = handles[1] ?? 0;
  const view = read(slabs, survivor);
  const oldStore = slabs.store(survivor);
  // Every other record released: each slab half empty, none empty.
  handles.forEach((handle, i) => {
    if (i % 2 === 0) slabs.release(handle);
  });
  assert.ok(slabs.wasteful);
  slabs.compact();
  assert.ok(!slabs.wasteful, `waste ${slabs.bytes - slabs.live} B over ${slabs.live} B live after compact`);
  assert.notEqual(slabs.store(survivor), oldStore, 'the record was copied out of its slab');
  assert.deepEqual(read(slabs, survivor), bytes(500, 1));
  assert.deepEqual(view, bytes(500, 1), 'the old view still reads the same bytes');
  handles.forEach((handle, i) => {
    if (i % 2 === 1) assert.deepEqual(read(slabs, handle), bytes(500, i));
  });
});

test('under churn the slabs stay within the allowance and every held record keeps its bytes', () => {
  const slabs = new RecordSlabs();
  const random = new SeededRandom(7);
  const held = new Map<number, Buffer>();
  for (let i = 0; i < 40_000; i++) {
    if (held.size > 2000 || (held.size > 0 && random.below(3) === 0)) {
      const handles = [...held.keys()];
      const handle = handles[random.below(handles.length)] ?? 0;
      slabs.release(handle);
      held.delete(handle);
    } else {
      const record = bytes(1 + random.below(random.below(10) === 0 ? 3 * LARGEST_SLABBED : 2000), i);
      held.set(keep(slabs, record), record);
    }
    if (slabs.wasteful) slabs.compact();
  }
  for (const [handle, record] of held) assert.deepEqual(read(slabs, handle), record);
  assert.equal(slabs.records, held.size);
  const live = [...held.values()].reduce((sum, r) => sum + r.length + FRAME_BYTES, 0);
  assert.equal(slabs.live, live);
  assert.ok(slabs.bytes - live <= Math.max(WASTE_ALLOWED * live, LEAST_WASTE_ALLOWED) + SLAB_BYTES, `waste ${slabs.bytes - live} B over ${live} B live`);
});

test('a few slabs are not evacuated for holes smaller than two slabs, however large a share of the records they are', () => {
  const slabs = new RecordSlabs();
  const handles = Array.from({ length: 200 }, (_, i) => keep(slabs, bytes(1000, i)));
  const released = (every: number, from: number): number => {
    let count = 0;
    for (let i = from; i < handles.length; i += every) {
      slabs.release(handles[i] ?? -1);
      count++;
    }
    return count;
  };
  // Every other record: holes in every slab, about as many bytes as the records left.
  released(2, 1);
  const waste = slabs.bytes - slabs.live;
  assert.ok(waste > WASTE_ALLOWED * slabs.live && waste < LEAST_WASTE_ALLOWED, `${waste} B of holes beside ${slabs.live} B of records`);
  assert.equal(slabs.wasteful, false, 'under two slabs of holes');
  released(4, 0);
  assert.ok(slabs.bytes - slabs.live > LEAST_WASTE_ALLOWED);
  assert.equal(slabs.wasteful, true, 'more than two slabs of holes');
});
