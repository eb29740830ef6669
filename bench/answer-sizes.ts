/**
 * What real catalog answers cost in the cache, for the hit-ratio replay: the load test's query
 * mix (src/loadtest/workload.ts: 1–3 words of real titles and author names, some filtered, some
 * with other page sizes) resolved by the origin's own code against the embedded catalog, each
 * answer prepared as the gateway keeps it (the origin's header fields, its tags, the body
 * compressed as the default `gateway.compression` does at fill) and counted as the cache counts it
 * (entry-size.ts `heldBytes`: its record, tags and the field shapes it brought). No HTTP: the replay needs sizes, not latencies.
 */
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { encodingPlan } from '../src/gateway/encoding/plan.ts';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { buildWorkload } from '../src/loadtest/workload.ts';
import { CatalogDb } from '../src/origin/catalog-db.ts';
import { strongEtag } from '../src/origin/etag.ts';
import { resolve } from '../src/origin/resources.ts';
import { heldBytes } from '../src/gateway/store/entry-size.ts';
import { prepare, RecordWriter } from '../src/gateway/store/record/entry-record.ts';
import { EntryMaker } from '../src/gateway/store/stored-response.ts';
import { parseTags } from '../src/gateway/store/tag-index.ts';
import { Codec } from '../src/shared/encoding/codec.ts';
import { compressionPolicy } from '../src/shared/encoding/policy.ts';
import { parseRequestTarget } from '../src/shared/request-target.ts';
import { freshFacts } from '../test/support/entry-facts.ts';

const FACTS = freshFacts(3_600_000, 0);
const MAX_TARGET_BYTES = 8192;

/** What `count` real answers hold in the cache besides their keys, which the caller adds with its own (entry-size.ts `entryBytes`). */
export function realAnswerBytes(dataDir: string, count: number): Uint32Array {
  const dbPath = join(dataDir, 'catalog.db');
  const workload = buildWorkload(readCatalogVocabulary(dbPath), {
    seed: 27,
    distinct: count,
    zipfExponent: 1,
    pagingShare: 0,
    filterShare: 0.25,
    subjects: 1,
    length: 1,
  });
  const db = new CatalogDb(dbPath);
  const policy = compressionPolicy(loadConfig({ env: {} }));
  const maker = new EntryMaker(new Codec(policy.levels));
  const bytes = new Uint32Array(count);
  try {
    workload.queries.forEach((query, i) => {
      const target = parseRequestTarget('GET', query.target, MAX_TARGET_BYTES);
      if (!target.ok) throw new Error(`the load test's query mix made a bad target: ${query.target}`);
      const resolution = resolve(db, target.target, () => undefined);
      if (!resolution.ok) throw new Error(`the origin refused ${query.target}`);
      const body = JSON.stringify(resolution.document);
      const fields: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600', etag: strongEtag(body) };
      if (resolution.next != null) fields.link = `<${resolution.next}>; rel="next"`;
      const identity = Buffer.from(body);
      const plan = encodingPlan(200, fields, identity.length, policy, true);
      const kept = plan.keep === undefined ? identity : maker.codec.encode(identity, plan.keep);
      const tags = parseTags(resolution.tags);
      const answer = [maker.prepare(200, fields, kept, plan, FACTS, undefined, [], tags)];
      const prepared = prepare(answer);
      bytes[i] = heldBytes(RecordWriter.length(prepared), tags.length, prepared.shapeBytes);
    });
  } finally {
    db.close();
  }
  return bytes;
}
