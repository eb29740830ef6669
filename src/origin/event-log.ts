/**
 * `GET /v1/events?after=<seq>&limit=<n>` (`catalog:admin`): the availability events logged after
 * a cursor, in the order they happened, each as its webhook delivered it (`id` is its
 * `webhook-id`) with its `seq`, and `last`, the newest seq of the log. A gateway that was away
 * replays them and keeps the seq of the last it applied; without `after` it learns only `last`.
 * A cursor the log no longer reaches (events after it were pruned, or it is past `last`: another
 * database's history) is a 410 `events-expired`, so that the gateway knows it missed some.
 */
import { problem } from '../shared/problem.ts';
import { unknownParameter } from '../shared/request-target.ts';
import type { CirculationDb } from './circulation-db.ts';
import type { CirculationAnswer as Answer } from './circulation.ts';

const ROUTE = '/v1/events';
const DEFAULT_LIMIT = 500;
const MAX_LIMIT = 1000;
const SEQ = /^(0|[1-9][0-9]{0,14})$/;
const LIMIT = /^[1-9][0-9]{0,3}$/;

function invalid(detail: string): Answer {
  return { kind: 'problem', problem: problem('invalid-parameter', detail) };
}

export function answerEvents(db: CirculationDb, rawQuery: string): Answer {
  const values = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (name !== 'after' && name !== 'limit') return { kind: 'problem', problem: unknownParameter(name, ROUTE) };
    if (values.has(name)) return invalid(`${name} must be given at most once`);
    values.set(name, value);
  }
  const after = values.get('after');
  if (after !== undefined && !SEQ.test(after)) return invalid('after must be the seq of an event (a non-negative integer), or 0 for the start of the log');
  const limit = values.get('limit') ?? String(DEFAULT_LIMIT);
  if (!LIMIT.test(limit) || Number(limit) > MAX_LIMIT) return invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  const found = db.eventsAfter(after === undefined ? undefined : Number(after), Number(limit));
  if (found.kind === 'expired') {
    const kept = found.oldest === undefined ? 'the log is empty' : `the log keeps events ${found.oldest} to ${found.last}`;
    return {
      kind: 'problem',
      problem: problem('events-expired', `events after ${String(after)} are not all kept: ${kept}; GET ${ROUTE} without after answers where the log stands`),
    };
  }
  const events = found.events.map((event) => ({ seq: event.seq, id: event.id, ...(JSON.parse(event.payload) as Record<string, unknown>) }));
  return { kind: 'written', status: 200, body: { events, last: found.last } };
}
