/**
 * S3-FIFO (Yang, Zhang, Qiu, Yue and Vinayak, SOSP 2023), a reference the replay sets beside
 * the gateway's policy: three FIFO queues, no LRU. A new entry goes into the small queue (10 % of
 * the bound); leaving it, an entry hit since it came in moves to the main queue, any other is
 * dropped and its key remembered in the ghost queue, so that one-hit wonders leave quickly (quick
 * demotion). A miss on a remembered key goes straight into the main queue. The main queue is
 * FIFO with reinsertion: its oldest entry goes back to the front while it has hits left (a
 * counter of two bits, one taken per pass), and leaves at 0.
 *
 * In bytes, as the replay bounds the store: the queues are measured by the sum of their entries'
 * sizes, and the ghost queue remembers keys up to the main queue's share of the bound in their
 * entries' bytes (in entries when all are one size, as the paper does). An entry larger than the
 * bound or than the largest entry the gateway stores is never kept, as in the store.
 */
import type { Hits } from './belady.ts';
import { IdLists } from './id-lists.ts';
import type { Trace } from './traces.ts';

const SMALL = 0;
const MAIN = 1;
const GHOST = 2;
/** The small queue's share of the bound: the paper's. */
const SMALL_SHARE = 0.1;
/** A hit counter saturates at 3 (two bits). */
const MAX_FREQUENCY = 3;

export function s3FifoHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const { requests, sizes } = trace;
  const queues = new IdLists(sizes, 3);
  const frequency = new Uint8Array(sizes.length);
  const smallTarget = SMALL_SHARE * boundBytes;
  const ghostBytes = boundBytes - smallTarget;
  let hits = 0;
  let hitBytes = 0;

  const remember = (id: number): void => {
    queues.pushNewest(GHOST, id);
    while (queues.bytes(GHOST) > ghostBytes) queues.remove(queues.oldest(GHOST));
  };
  const evictSmall = (): void => {
    const id = queues.oldest(SMALL);
    // It keeps its count, as in the paper's algorithm: hits in the small queue buy passes in the main one.
    if ((frequency[id] ?? 0) > 0) {
      queues.pushNewest(MAIN, id);
    } else {
      remember(id);
    }
  };
  const evictMain = (): void => {
    const id = queues.oldest(MAIN);
    const f = frequency[id] ?? 0;
    if (f > 0) {
      frequency[id] = f - 1;
      queues.pushNewest(MAIN, id);
    } else {
      queues.remove(id);
    }
  };
  /** Makes room for `size` bytes: from the small queue while it is above its share (or the main queue is empty), else from the main queue. */
  const makeRoom = (size: number): void => {
    while (queues.bytes(SMALL) + queues.bytes(MAIN) + size > boundBytes) {
      if (queues.count(SMALL) > 0 && (queues.bytes(SMALL) >= smallTarget || queues.count(MAIN) === 0)) evictSmall();
      else evictMain();
    }
  };

  for (const id of requests) {
    const size = sizes[id] ?? 0;
    const queue = queues.listOf(id);
    if (queue === SMALL || queue === MAIN) {
      hits++;
      hitBytes += size;
      frequency[id] = Math.min(MAX_FREQUENCY, (frequency[id] ?? 0) + 1);
      continue;
    }
    if (size > boundBytes || size > maxEntryBytes) continue;
    makeRoom(size);
    frequency[id] = 0;
    queues.pushNewest(queue === GHOST ? MAIN : SMALL, id);
  }
  return { hits, hitBytes };
}
