/**
 * The circulation resources (contract, "Loans, events and tags"): loans under `catalog:write`,
 * webhook registrations and the event log under `catalog:admin`. None of their answers may be
 * stored by anyone (`Cache-Control: no-store`), and a loan's effect reaches the searches through
 * the events.
 */
import type { IncomingMessage } from 'node:http';
import { BRANCH_ID } from '../shared/api-types.ts';
import { problem, type Problem } from '../shared/problem.ts';
import { readJsonObject, unknownMember } from '../shared/request-body.ts';
import { strayParameter } from '../shared/request-target.ts';
import { webhookUrl } from '../shared/webhook-url.ts';
import { AVAILABILITY_CHANGED, EVENT_TYPES, idNumber, type CirculationDb } from './circulation-db.ts';
import { answerEvents } from './event-log.ts';

export const CIRCULATION_ROUTES = {
  '/v1/loans': { methods: ['POST'], scope: 'catalog:write' },
  '/v1/loans/{id}': { methods: ['GET', 'HEAD', 'DELETE'], scope: 'catalog:write' },
  '/v1/webhooks': { methods: ['GET', 'HEAD', 'POST'], scope: 'catalog:admin' },
  '/v1/webhooks/{id}': { methods: ['GET', 'HEAD', 'DELETE'], scope: 'catalog:admin' },
  '/v1/events': { methods: ['GET', 'HEAD'], scope: 'catalog:admin' },
} as const;

export type CirculationRoute = keyof typeof CIRCULATION_ROUTES;

export interface CirculationTarget {
  readonly route: CirculationRoute;
  readonly id: string;
}

/** The circulation route of `path`, or undefined when it is not one of them. */
export function matchCirculation(path: string): CirculationTarget | undefined {
  if (path === '/v1/loans' || path === '/v1/webhooks' || path === '/v1/events') return { route: path, id: '' };
  const slash = path.lastIndexOf('/');
  const id = path.slice(slash + 1);
  const parent = path.slice(0, slash);
  if (id === '' || id.includes('%')) return undefined;
  if (parent === '/v1/loans') return { route: '/v1/loans/{id}', id };
  if (parent === '/v1/webhooks') return { route: '/v1/webhooks/{id}', id };
  return undefined;
}

export type CirculationAnswer =
  | { readonly kind: 'problem'; readonly problem: Problem }
  | { readonly kind: 'written'; readonly status: number; readonly body?: unknown; readonly location?: string };

const LOAN_MEMBERS: ReadonlySet<string> = new Set(['book', 'branch']);
const WEBHOOK_MEMBERS: ReadonlySet<string> = new Set(['url', 'types']);

/** Webhook bodies and loan bodies are a few dozen bytes; anything near this is not one. */
const MAX_BODY_BYTES = 16 * 1024;

function invalid(detail: string): CirculationAnswer {
  return { kind: 'problem', problem: problem('invalid-body', detail) };
}

function notFound(what: string): CirculationAnswer {
  return { kind: 'problem', problem: problem('not-found', `no ${what} with this id`) };
}

const LEND_REFUSALS = {
  'unknown-book': problem('not-found', 'no book with this id'),
  'unknown-branch': problem('not-found', 'no branch with this id'),
  'not-held': problem('invalid-body', 'the branch holds no copy of this book'),
  'none-free': problem('no-copy-free', 'every copy of this book at this branch is on loan'),
} as const;

async function lend(db: CirculationDb, req: IncomingMessage): Promise<CirculationAnswer> {
  const body = await readJsonObject(req, MAX_BODY_BYTES);
  if (!body.ok) return { kind: 'problem', problem: body.problem };
  const stray = unknownMember(body.value, LOAN_MEMBERS);
  if (stray !== undefined) return invalid(`unknown member ${stray}: a loan is {"book":"bk_…","branch":"branch_…"}`);
  const { book, branch } = body.value;
  if (typeof book !== 'string' || typeof branch !== 'string') return invalid('the body must be {"book":"bk_…","branch":"branch_…"}');
  const bookNumber = idNumber('book', book);
  if (bookNumber === undefined) return invalid('book must be a book id such as bk_1042');
  if (!BRANCH_ID.test(branch)) return invalid('branch must be a branch id such as branch_central');
  const lent = db.lend(bookNumber, branch);
  if (!lent.ok) return { kind: 'problem', problem: LEND_REFUSALS[lent.reason] };
  return { kind: 'written', status: 201, body: lent.loan, location: `/v1/loans/${lent.loan.id}` };
}

async function register(db: CirculationDb, req: IncomingMessage): Promise<CirculationAnswer> {
  const body = await readJsonObject(req, MAX_BODY_BYTES);
  if (!body.ok) return { kind: 'problem', problem: body.problem };
  const stray = unknownMember(body.value, WEBHOOK_MEMBERS);
  if (stray !== undefined) return invalid(`unknown member ${stray}: a registration has "url" and, optionally, "types"`);
  const url = webhookUrl(body.value.url);
  if (url === undefined) return invalid('url must be an absolute https:// (or http://) URL without credentials');
  const types = body.value.types ?? [AVAILABILITY_CHANGED];
  if (!Array.isArray(types) || types.length === 0 || !types.every((t) => typeof t === 'string' && EVENT_TYPES.includes(t))) {
    return invalid(`types must be a non-empty list of event types: ${EVENT_TYPES.join(', ')}`);
  }
  const { created, ...registration } = db.register(url, [...new Set(types as string[])]);
  return { kind: 'written', status: created ? 201 : 200, body: registration, location: `/v1/webhooks/${registration.id}` };
}

/**
 * Runs one authorised circulation request; the method has been checked against the route.
 * `rawQuery` is what follows the `?`: only the event log takes parameters.
 */
export async function answerCirculation(db: CirculationDb, req: IncomingMessage, target: CirculationTarget, rawQuery: string): Promise<CirculationAnswer> {
  if (target.route === '/v1/events') return answerEvents(db, rawQuery);
  // Refused, as on every other route, rather than ignored: a client that sends
  // `DELETE /v1/loans/ln_7?dryRun=true` must not have the copy returned.
  const stray = strayParameter(rawQuery, target.route);
  if (stray !== undefined) return { kind: 'problem', problem: stray };
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  switch (target.route) {
    case '/v1/loans':
      return lend(db, req);
    case '/v1/loans/{id}': {
      const id = idNumber('loan', target.id);
      if (method === 'DELETE') return id !== undefined && db.giveBack(id) ? { kind: 'written', status: 204 } : notFound('active loan');
      const loan = id === undefined ? undefined : db.loan(id);
      return loan === undefined ? notFound('active loan') : { kind: 'written', status: 200, body: loan };
    }
    case '/v1/webhooks':
      return method === 'POST' ? register(db, req) : { kind: 'written', status: 200, body: { results: db.webhooks() } };
    case '/v1/webhooks/{id}': {
      const id = idNumber('webhook', target.id);
      if (method === 'DELETE') return id !== undefined && db.unregister(id) ? { kind: 'written', status: 204 } : notFound('webhook');
      const webhook = id === undefined ? undefined : db.webhook(id);
      return webhook === undefined ? notFound('webhook') : { kind: 'written', status: 200, body: webhook };
    }
  }
}
