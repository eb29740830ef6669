/**
 * How few bytes an entry could be counted at, whatever its layout: the floor under the compression
 * issue's "4× the entries" on short answers (docs/performance.md, "Entries per MiB").
 *
 *   node bench/entry-floor.ts [--data DIR] [--answers N, default 1000]
 *
 * Asks N targets of the bench's query space (the ones `npm run bench` warms) of the real origin
 * and of the memory bench's tiny origin, as a fill asks (gzip accepted), and averages what an
 * entry of each must keep: its key, its body as kept and as gzip-9 would keep it, its tags and its
 * entity tag. It then adds those up as the cache counts (entry-size.ts: heap objects with their
 * reserve, bytes outside the heap as they are, a slab's share of holes) for two layouts: every
 * field of an entry packed as bytes beside its body, its key a string in the policy's slots (the
 * memory tier's layout, without the field values that a record keeps besides its entity tag), and
 * the same with the key packed as bytes too, in an index that keeps no string.
 */
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { WASTE_ALLOWED } from '../src/gateway/store/memory/record-slabs.ts';
import { heapBytes, SLOT_BYTES, stringBytes } from '../src/gateway/store/entry-size.ts';
import { POSTING_BYTES } from '../src/gateway/store/tag-index.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import { Fleet } from './fleet.ts';

/** The tag index's share of a tagged key as entry-size.ts counts it. */
const TAGGED_KEY = heapBytes(12) + 24;
/**
 * What a packed entry keeps besides its strings: status, coding, shape and terms as small numbers,
 * three times as doubles, lengths (24 B); its slab's list of holders (entry-size.ts); and, with the
 * key packed too, a slot of a typed-array table (hash, two links, size, record: 20 B at a load of
 * 0.8) and the tag index's entry for the key without its list slot.
 */
const RECORD_FACTS = 24;
const HOLDER = heapBytes(12);
const OWN_INDEX = 24;
const OWN_TAGGED_KEY = 24;

interface Answer {
  readonly key: number;
  readonly kept: number;
  readonly gzip: number;
  readonly tags: number;
  readonly tagText: number;
  readonly etag: number;
}

async function ask(origin: ServerProcess, target: string, authorization: string): Promise<Answer> {
  const res = await request(`${origin.url}${target}`, { headers: { authorization, 'accept-encoding': 'gzip' } });
  const body = Buffer.from(await res.body.arrayBuffer());
  const coded = res.headers['content-encoding'] === 'gzip' ? body : gzipSync(body, { level: 9 });
  const tagText = String(res.headers['surrogate-key'] ?? '');
  return {
    key: target.length,
    kept: body.length,
    gzip: Math.min(body.length, coded.length),
    tags: tagText === '' ? 0 : tagText.split(' ').length,
    tagText: tagText.length,
    etag: String(res.headers.etag ?? '').length,
  };
}

function mean(answers: readonly Answer[], field: keyof Answer): number {
  return answers.reduce((sum, a) => sum + a[field], 0) / answers.length;
}

/** A body of `length` bytes in a slab, with its share of holes and its holder. */
function slabbed(length: number): number {
  return length * (1 + WASTE_ALLOWED) + HOLDER;
}

function report(name: string, answers: readonly Answer[]): void {
  const key = mean(answers, 'key');
  const tags = mean(answers, 'tags');
  const postings = tags * POSTING_BYTES;
  const record = (RECORD_FACTS + mean(answers, 'etag') + 1 + mean(answers, 'tagText') + 2) * (1 + WASTE_ALLOWED);
  const keyString = stringBytes('k'.repeat(Math.round(key)));
  const withSlots = SLOT_BYTES + keyString + record + postings + TAGGED_KEY;
  const keyPacked = OWN_INDEX + key * (1 + WASTE_ALLOWED) + record + postings + OWN_TAGGED_KEY;
  const kept = slabbed(mean(answers, 'kept'));
  const gzip = slabbed(mean(answers, 'gzip'));
  const row = (label: string, fixed: number): string =>
    `  ${label.padEnd(52)} ${(fixed + kept).toFixed(0).padStart(5)} B, ${(fixed + gzip).toFixed(0).padStart(5)} B with every body gzip-9 where smaller`;
  console.log(
    `${name}: ${answers.length} answers; key ${key.toFixed(1)} characters, body kept ${mean(answers, 'kept').toFixed(0)} B (gzip-9 where smaller ${mean(answers, 'gzip').toFixed(0)} B), ${tags.toFixed(2)} tags in ${mean(answers, 'tagText').toFixed(1)} characters, entity tag ${mean(answers, 'etag').toFixed(1)}`,
  );
  console.log(row('packed as bytes, the key a string in the slots', withSlots));
  console.log(row('packed as bytes, the key too', keyPacked));
}

async function main(dataDir: string, count: number): Promise<void> {
  const fleet = new Fleet(dataDir);
  try {
    const { space, authorization } = await fleet.reader();
    const targets = Array.from({ length: count }, () => space.take());
    for (const [name, origin] of [
      ["the catalog origin (the throughput bench's URLs)", await fleet.origin()],
      ["the tiny origin (the memory bench's pages)", await fleet.script('tiny-origin', 'tiny-origin.ts')],
    ] as const) {
      const answers: Answer[] = [];
      for (const target of targets) answers.push(await ask(origin, target, authorization));
      report(name, answers);
    }
  } finally {
    await fleet.close();
  }
}

const { values } = parseArgs({ options: { data: { type: 'string', default: 'data/bench' }, answers: { type: 'string', default: '1000' } } });
await main(values.data, Number(values.answers));
