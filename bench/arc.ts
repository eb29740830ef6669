/**
 * ARC (Megiddo and Modha, FAST 2003), a reference the replay sets beside the gateway's policy:
 * T1 holds entries asked once lately, T2 those asked at least twice, and the ghost lists B1 and
 * B2 remember the keys lately pushed out of each. A miss on a key in B1 says T1 was too small,
 * one in B2 that T2 was, and the target size `p` of T1 moves accordingly; that is how ARC
 * adapts between recency and frequency with no parameter to tune.
 *
 * Size-aware, in bytes, as the replay bounds the store: every list is measured by the sum of
 * its entries' sizes, the bound `c` is the store's bound in bytes, and `p` moves by the missed
 * entry's size times ARC's ratio of the ghost lists (there, of their bytes). With entries of one
 * size (a block trace replayed with `--bound-entries`) this is ARC as published, counted in
 * entries. An entry larger than the bound or than the largest entry the gateway stores is never
 * kept, as in the store.
 */
import type { Hits } from './belady.ts';
import { IdLists } from './id-lists.ts';
import type { Trace } from './traces.ts';

const T1 = 0;
const T2 = 1;
const B1 = 2;
const B2 = 3;

export function arcHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const { requests, sizes } = trace;
  const lists = new IdLists(sizes, 4);
  const c = boundBytes;
  let p = 0;
  let hits = 0;
  let hitBytes = 0;

  /** Makes room for `size` bytes in T1 ∪ T2, moving the oldest of T1 (while above its target) or T2 to their ghosts. */
  const replace = (size: number, inB2: boolean): void => {
    while (lists.bytes(T1) + lists.bytes(T2) + size > c) {
      const t1 = lists.bytes(T1);
      const fromT1 = lists.count(T1) > 0 && (t1 > p || (inB2 && t1 === p) || lists.count(T2) === 0);
      if (fromT1) lists.pushNewest(B1, lists.oldest(T1));
      else lists.pushNewest(B2, lists.oldest(T2));
    }
  };

  for (const id of requests) {
    const size = sizes[id] ?? 0;
    const list = lists.listOf(id);
    if (list === T1 || list === T2) {
      hits++;
      hitBytes += size;
      lists.pushNewest(T2, id);
      continue;
    }
    if (size > c || size > maxEntryBytes) continue;
    if (list === B1) {
      p = Math.min(c, p + size * Math.max(1, lists.bytes(B2) / lists.bytes(B1)));
      lists.remove(id);
      replace(size, false);
      lists.pushNewest(T2, id);
    } else if (list === B2) {
      p = Math.max(0, p - size * Math.max(1, lists.bytes(B1) / lists.bytes(B2)));
      lists.remove(id);
      replace(size, true);
      lists.pushNewest(T2, id);
    } else {
      // L1 = T1 ∪ B1 stays within c, and all four lists within 2c: ghosts go first.
      while (lists.bytes(T1) + lists.bytes(B1) + size > c && lists.count(B1) > 0) lists.remove(lists.oldest(B1));
      while (lists.bytes(T1) + size > c && lists.count(T1) > 0) lists.remove(lists.oldest(T1));
      while (lists.bytes(T1) + lists.bytes(T2) + lists.bytes(B1) + lists.bytes(B2) + size > 2 * c && lists.count(B2) > 0) lists.remove(lists.oldest(B2));
      replace(size, false);
      lists.pushNewest(T1, id);
    }
  }
  return { hits, hitBytes };
}
