/** The memory tier's slabs: records kept by handle outside the heap, holes let go of or evacuated, bytes never changed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DRAINING_SLABS,
  FRAME_BYTES,
  LARGEST_SLABBED,
  LEAST_WASTE_ALLOWED,
  RecordSlabs,
  SLAB_BYTES,
  SPARE_SLABS,
  WASTE_ALLOWED,
} from '../../src/gateway/store/memory/record-slabs.ts';
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

/** One of the handles held, chosen by `random`. */
function anyHeld(held: ReadonlyMap<number, Buffer>, random: SeededRandom): number {
  const handles = [...held.keys()];
  return handles[random.below(handles.length)] ?? 0;
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
      const handle = anyHeld(held, random);
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

/** A shared slab's records, released: the slab is empty, not current (a record past it began the next). */
function emptied(slabs: RecordSlabs, seed: number): { readonly store: Buffer; readonly next: number } {
  const fill = Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES));
  const handles = Array.from({ length: fill }, (_, i) => keep(slabs, bytes(1000, seed + i)));
  const store = slabs.store(handles[0] ?? 0);
  const next = keep(slabs, bytes(1000, seed + fill));
  for (const handle of handles) slabs.release(handle);
  return { store, next };
}

test('a slab whose records are all released is written again by the next records, not allocated anew', () => {
  const slabs = new RecordSlabs();
  const { store, next } = emptied(slabs, 0);
  assert.equal(slabs.spares, 1);
  // The current slab fills, and the one after it is the emptied one.
  const later = Array.from({ length: 200 }, (_, i) => keep(slabs, bytes(1000, 500 + i)));
  assert.ok(
    later.some((handle) => slabs.store(handle) === store),
    'the emptied slab holds new records',
  );
  assert.equal(slabs.spares, 0);
  later.forEach((handle, i) => {
    assert.deepEqual(read(slabs, handle), bytes(1000, 500 + i));
  });
  assert.deepEqual(read(slabs, next), bytes(1000, Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES))));
});

test('a slab a view left the store from is never written again, whatever is released or evacuated', () => {
  const slabs = new RecordSlabs();
  const fill = Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES));
  const handles = Array.from({ length: fill }, (_, i) => keep(slabs, bytes(1000, i)));
  const lent = handles[5] ?? 0;
  const view = read(slabs, lent);
  const store = slabs.store(lent);
  slabs.exposed(lent);
  keep(slabs, bytes(1000, 99));
  for (const handle of handles) slabs.release(handle);
  assert.equal(slabs.spares, 0, 'not kept to be written again');
  const later = Array.from({ length: 2000 }, (_, i) => keep(slabs, bytes(1000, 700 + i)));
  assert.ok(!later.some((handle) => slabs.store(handle) === store));
  assert.deepEqual(view, bytes(1000, 5), 'the view still reads its record');
});

test('an evacuated slab is written again unless a view left it; the views that did keep their bytes', () => {
  const slabs = new RecordSlabs();
  const handles = Array.from({ length: 600 }, (_, i) => keep(slabs, bytes(500, i)));
  const lent = handles[1] ?? 0;
  const lentStore = slabs.store(lent);
  const view = read(slabs, lent);
  slabs.exposed(lent);
  const stores = new Set(handles.map((handle) => slabs.store(handle)));
  handles.forEach((handle, i) => {
    if (i % 2 === 0) slabs.release(handle);
  });
  slabs.compact();
  assert.ok(slabs.spares > 0, 'evacuated slabs kept');
  const later = Array.from({ length: 600 }, (_, i) => keep(slabs, bytes(500, 1000 + i)));
  const reused = later.filter((handle) => stores.has(slabs.store(handle)));
  assert.ok(reused.length > 0, 'new records in the evacuated slabs');
  assert.ok(!later.some((handle) => slabs.store(handle) === lentStore), 'none in the one a view left');
  assert.deepEqual(view, bytes(500, 1));
  handles.forEach((handle, i) => {
    if (i % 2 === 1) assert.deepEqual(read(slabs, handle), bytes(500, i));
  });
  later.forEach((handle, i) => {
    assert.deepEqual(read(slabs, handle), bytes(500, 1000 + i));
  });
});

test('random interleavings of stores, views leaving, releases and evacuations: every view and every held record keeps its bytes', () => {
  for (let seed = 1; seed <= 6; seed++) {
    const slabs = new RecordSlabs();
    const random = new SeededRandom(seed);
    const held = new Map<number, Buffer>();
    const views: { view: Buffer; record: Buffer }[] = [];
    const shared = new Set<Buffer>();
    const lent = new Set<Buffer>();
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      const roll = random.below(10);
      if (held.size > 600 || (held.size > 0 && roll < 4)) {
        const handle = anyHeld(held, random);
        slabs.release(handle);
        held.delete(handle);
      } else if (roll === 4 && held.size > 0 && random.below(4) === 0) {
        // A view leaves the store (a body handed to a socket): it is read long after.
        const handle = anyHeld(held, random);
        slabs.exposed(handle);
        lent.add(slabs.store(handle));
        views.push({ view: read(slabs, handle), record: held.get(handle) ?? Buffer.alloc(0) });
      } else {
        const record = bytes(1 + random.below(random.below(20) === 0 ? 2 * LARGEST_SLABBED : 1500), i + seed);
        const handle = keep(slabs, record);
        held.set(handle, record);
        if (slabs.store(handle).length === SLAB_BYTES) shared.add(slabs.store(handle));
      }
      if (slabs.wasteful) slabs.compact();
      most = Math.max(most, slabs.bytes);
    }
    for (const { view, record } of views) assert.deepEqual(view, record, `seed ${seed}: a view changed under its reader`);
    for (const [handle, record] of held) assert.deepEqual(read(slabs, handle), record, `seed ${seed}: a held record changed`);
    // Without a view leaving them, the slabs ever made are about as many as are held at once.
    const unlent = [...shared].filter((store) => !lent.has(store)).length;
    assert.ok(unlent <= most / SLAB_BYTES + SPARE_SLABS + 2, `seed ${seed}: ${unlent} slabs no view left, at most ${most} B held`);
  }
});

test('a pinned slab that empties is written again only once its last pin goes; one exposed meanwhile never', () => {
  const slabs = new RecordSlabs();
  const fill = Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES));
  const first = Array.from({ length: fill }, (_, i) => keep(slabs, bytes(1000, i)));
  const store = slabs.store(first[0] ?? 0);
  const view = read(slabs, first[3] ?? 0);
  const pins = [slabs.pin(first[3] ?? 0), slabs.pin(first[7] ?? 0)];
  keep(slabs, bytes(1000, 99));
  for (const handle of first) slabs.release(handle);
  assert.equal(slabs.draining, 1, 'kept while pinned');
  const during = Array.from({ length: 200 }, (_, i) => keep(slabs, bytes(1000, 300 + i)));
  assert.ok(!during.some((handle) => slabs.store(handle) === store), 'not written while pinned');
  assert.deepEqual(view, bytes(1000, 3));
  slabs.unpin(pins[0] ?? 0);
  assert.equal(slabs.draining, 1, 'one pin left');
  slabs.unpin(pins[1] ?? 0);
  assert.equal(slabs.draining, 0);
  const after = Array.from({ length: 200 }, (_, i) => keep(slabs, bytes(1000, 600 + i)));
  assert.ok(
    after.some((handle) => slabs.store(handle) === store),
    'written again once unpinned',
  );

  const exposedSlabs = new RecordSlabs();
  const records = Array.from({ length: fill }, (_, i) => keep(exposedSlabs, bytes(1000, i)));
  const exposedStore = exposedSlabs.store(records[0] ?? 0);
  const pin = exposedSlabs.pin(records[0] ?? 0);
  keep(exposedSlabs, bytes(1000, 99));
  for (const handle of records) exposedSlabs.release(handle);
  exposedSlabs.expose(pin);
  assert.equal(exposedSlabs.draining, 0);
  assert.equal(exposedSlabs.spares, 0);
  const later = Array.from({ length: 200 }, (_, i) => keep(exposedSlabs, bytes(1000, 300 + i)));
  assert.ok(!later.some((handle) => exposedSlabs.store(handle) === exposedStore));
});

test('pins never given back cost places among the slabs kept, not slabs for good; a late one changes nothing', () => {
  const slabs = new RecordSlabs();
  const fill = Math.floor(SLAB_BYTES / (1000 + FRAME_BYTES));
  const lost: number[] = [];
  let view: Buffer = Buffer.alloc(0);
  let last: number | undefined;
  for (let s = 0; s < DRAINING_SLABS + 10; s++) {
    const handles = Array.from({ length: fill }, (_, i) => keep(slabs, bytes(1000, s + i)));
    if (s === 0) view = read(slabs, handles[0] ?? 0);
    lost.push(slabs.pin(handles[0] ?? 0));
    if (last !== undefined) slabs.release(last);
    last = keep(slabs, bytes(1000, 99));
    for (const handle of handles) slabs.release(handle);
  }
  assert.equal(slabs.draining, DRAINING_SLABS);
  // The oldest were left to the collector and their numbers given to new slabs: their pins are of another generation.
  const held = Array.from({ length: 2000 }, (_, i) => keep(slabs, bytes(1000, 5000 + i)));
  for (const pin of lost) slabs.unpin(pin);
  assert.equal(slabs.draining, 0);
  assert.deepEqual(view, bytes(1000, 0), 'a slab left to the collector is never written again');
  held.forEach((handle, i) => {
    assert.deepEqual(read(slabs, handle), bytes(1000, 5000 + i));
  });
});

test('random interleavings with pins taken, given back late or never: every pinned view keeps its bytes until given back', () => {
  for (let seed = 1; seed <= 6; seed++) {
    const slabs = new RecordSlabs();
    const random = new SeededRandom(100 + seed);
    const held = new Map<number, Buffer>();
    let pinned: { pin: number; view: Buffer; record: Buffer }[] = [];
    for (let i = 0; i < 12_000; i++) {
      const roll = random.below(10);
      if (held.size > 600 || (held.size > 0 && roll < 4)) {
        const handle = anyHeld(held, random);
        slabs.release(handle);
        held.delete(handle);
      } else if (roll === 4 && held.size > 0) {
        const handle = anyHeld(held, random);
        pinned.push({ pin: slabs.pin(handle), view: read(slabs, handle), record: held.get(handle) ?? Buffer.alloc(0) });
      } else if (roll === 5 && pinned.length > 0) {
        // Given back (or, one time in ten, never: a request that failed half way), after a last read of the view.
        const at = random.below(pinned.length);
        const { pin, view, record } = pinned[at] ?? { pin: 0, view: Buffer.alloc(0), record: Buffer.alloc(0) };
        assert.deepEqual(view, record, `seed ${seed}: a pinned view changed under its reader`);
        if (random.below(10) !== 0) {
          if (random.below(5) === 0) slabs.expose(pin);
          else slabs.unpin(pin);
        }
        pinned = pinned.filter((_, j) => j !== at);
      } else {
        const record = bytes(1 + random.below(1500), i + seed);
        held.set(keep(slabs, record), record);
      }
      if (slabs.wasteful) slabs.compact();
    }
    for (const { view, record } of pinned) assert.deepEqual(view, record, `seed ${seed}: a pinned view changed under its reader`);
    for (const [handle, record] of held) assert.deepEqual(read(slabs, handle), record, `seed ${seed}: a held record changed`);
  }
});
