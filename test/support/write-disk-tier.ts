/**
 * Writes to the disk tier in DIR (for OWNER) without end, as a fill storm does: entries whose
 * body is its key repeated, committed 64 at a time. Prints "writing" after the first commit;
 * the kill test ends it with SIGKILL in the middle of its writes.
 */
import { cacheKey } from '../../src/gateway/store/memory/response-cache.ts';
import { openDiskTier } from './disk-tier.ts';
import { freshFacts } from './entry-facts.ts';

const [dir = '', owner] = process.argv.slice(2);
const { disk, maker } = openDiskTier(dir, { owner: Number(owner), maxBytes: 256 << 20 });
const FACTS = freshFacts(3_600_000, Date.now());

/** What the entry at `key` holds: the key, repeated to a few KB (the kill test checks it). */
function bodyOf(key: string): Buffer {
  return Buffer.from(key.repeat(Math.ceil(3000 / key.length)));
}

for (let i = 0; ; i++) {
  const key = `/v1/books?q=storm${i}`;
  void disk.put(
    cacheKey(key),
    maker.prepare(200, { 'content-type': 'application/json' }, bodyOf(key), { keep: 'identity', offered: [] }, FACTS, undefined, [], [`bk_${i}`]),
    { generation: 0, mark: '' },
  );
  if (i % 64 === 63) {
    disk.flush();
    if (i === 63) process.stdout.write('writing\n');
  }
}
