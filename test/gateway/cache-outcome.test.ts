/**
 * The one outcome vocabulary (src/gateway/cache-outcome.ts): every row of the documented
 * `Cache-Status` table is a value the code formats, and its `cache` label is the one the code's
 * table derives, so the docs, the header, the log and the metrics cannot drift apart.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CACHE_LABELS,
  CACHE_NAME,
  cacheLabel,
  cacheStatus,
  CacheStatusValues,
  STALE_REASONS,
  type CacheOutcome,
  type Forward,
  type OutcomeKind,
} from '../../src/gateway/cache-outcome.ts';

const HEADING = '`Age` and `Cache-Status`';

/** The document that holds the table: the caching rules page once the README links to it. */
function tableDocument(): string {
  for (const file of ['docs/caching.md', 'README.md']) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (text.includes(HEADING)) return text;
  }
  throw new Error(`no document has the ${HEADING} table`);
}

interface Row {
  readonly value: string;
  readonly label: string;
}

function rows(doc: string): Row[] {
  const section = doc.slice(doc.indexOf(HEADING));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('|---')));
  const found: Row[] = [];
  for (const line of table.split('\n')) {
    const match = /^\| `([^`]+)` \| .* \| `([a-z]+)` \|$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) found.push({ value: match[1], label: match[2] });
  }
  return found;
}

/** What a documented value says happened, read as the RFC 9211 parameters say it. */
function outcomeOf(value: string): CacheOutcome {
  const [first, ...rest] = value.split('; ');
  const params = new Map(rest.map((p) => p.split('=') as [string, string | undefined]));
  const ttl = params.get('ttl');
  const detail = params.get('detail');
  const stale = STALE_REASONS.find((reason) => reason === detail);
  // Any other detail is written as it is, whatever it says: read as free text, an upstream failure's.
  const failure = stale === undefined ? detail : undefined;
  if (first === 'hit') return stale === undefined ? { kind: 'hit', ttl: Number(ttl), failure } : { kind: 'stale', ttl: Number(ttl), detail: stale };
  const fwd = first?.slice('fwd='.length) as Forward;
  const fwdStatus = params.has('fwd-status') ? Number(params.get('fwd-status')) : undefined;
  const fields = { fwd, stored: params.has('stored'), collapsed: params.has('collapsed'), fwdStatus, ttl: ttl === undefined ? undefined : Number(ttl) };
  if (stale !== undefined) return { ...fields, kind: 'stale', detail: stale };
  let kind: Exclude<OutcomeKind, 'stale'> = 'miss';
  if (fwd === 'method' || fwd === 'bypass') kind = 'pass';
  else if (fwdStatus === 304) kind = 'revalidated';
  return { ...fields, kind, failure };
}

test('every documented Cache-Status value is what the code sends, with the label the code derives', () => {
  const documented = rows(tableDocument());
  assert.ok(documented.length >= 10, `${documented.length} rows read`);
  for (const { value, label } of documented) {
    const outcome = outcomeOf(value);
    assert.equal(cacheStatus(outcome), `${CACHE_NAME}; ${value}`);
    assert.equal(cacheLabel(outcome), label, value);
  }
});

test('every label the code can derive for a request that reached the cache is documented', () => {
  const labels = new Set(rows(tableDocument()).map((r) => r.label));
  for (const [kind, { alone, collapsed }] of Object.entries(CACHE_LABELS)) {
    if (kind === 'none') continue;
    assert.ok(labels.has(alone), `${kind}: ${alone}`);
    assert.ok(labels.has(collapsed), `${kind} collapsed: ${collapsed}`);
  }
});

test('every reason to forward (RFC 9211 §2.2) is documented', () => {
  const forwards = new Set(
    rows(tableDocument())
      .map((r) => outcomeOf(r.value).fwd)
      .filter((f) => f !== undefined),
  );
  assert.deepEqual([...forwards].sort(), ['bypass', 'method', 'miss', 'request', 'stale', 'vary-miss']);
});

test('a refusal before the cache sends no Cache-Status and is labelled none', () => {
  assert.equal(cacheStatus({ kind: 'none' }), undefined);
  assert.equal(cacheLabel({ kind: 'none', collapsed: true }), 'none');
});

test('the values kept for hits are the values cacheStatus makes, per ttl, from memory and from the disk tier', () => {
  const values = new CacheStatusValues();
  const outcomes: CacheOutcome[] = [
    { kind: 'hit', ttl: 60 },
    { kind: 'hit', ttl: 60, detail: 'disk' },
    { kind: 'hit', ttl: 59, detail: 'disk' },
    { kind: 'hit', ttl: 59 },
    { kind: 'hit', ttl: 60, detail: 'shared' },
    { kind: 'hit', ttl: 60, failure: 'timeout' },
  ];
  for (let round = 0; round < 2; round++) for (const outcome of outcomes) assert.equal(values.of(outcome), cacheStatus(outcome), JSON.stringify(outcome));
  assert.equal(values.of({ kind: 'hit', ttl: 60, detail: 'disk' }), `${CACHE_NAME}; hit; ttl=60; detail=disk`);
});
