/**
 * The deliver step: the only code that writes a stored or filled response. It sends the
 * representation it is handed (the one negotiation chose, ../shared/encoding/negotiate.ts), adds
 * what every send must carry (`Age`, `Cache-Status`, `X-Request-Id`), answers a client's
 * conditional request with 304 and its Range with 206 (RFC 9110 §13, §14; RFC 9111 §4.3.2), and
 * leaves the body out for HEAD. A failed precondition (412) or a range that cannot be satisfied
 * (416) is an error like any other, so it is handed back as a problem for the caller to send.
 * Header fields were prepared when the representation was made, so a hit over HTTP/1.1 joins a
 * few strings and makes one write.
 */
import { problem, type Problem } from '../shared/problem.ts';
import { ageSeconds } from './rules/freshness.ts';
import { rangeAnswer, type RangeRequest } from './rules/ranges.ts';
import { preconditionStatus, type Conditions, type Validators } from './rules/validation.ts';
import type { FieldText } from './store/field-shapes.ts';
import type { Representation, StoredResponse } from './store/stored-response.ts';
import { canSendHeadText, sendHeadText, sendWhole } from './listeners/whole-answer.ts';
import { isStream, type Reply } from '../shared/message-seam.ts';
import { respondFields, respondText } from './respond.ts';

export interface DeliverContext {
  readonly isHead: boolean;
  readonly conditions: Conditions;
  /** A GET's Range and If-Range (RFC 9110 §14.2); undefined without Range, and for HEAD. */
  readonly range: RangeRequest | undefined;
  readonly requestId: string;
  /** The `Cache-Status` value (cache-outcome.ts). */
  readonly cacheStatus: string;
  readonly now: number;
}

export interface Delivered {
  readonly status: number;
  /** Body bytes as they went on the wire. */
  readonly bytes: number;
  /** The content coding of the representation sent (`identity` for none), when one was. */
  readonly encoding?: string | undefined;
}

/** RFC 9110 §15.4.5: the fields a 304 must repeat from the 200 it stands for. */
const NOT_MODIFIED_FIELDS: ReadonlySet<string> = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']);

function isConditional(conditions: Conditions): boolean {
  return (
    conditions.ifNoneMatch !== undefined ||
    conditions.ifModifiedSince !== undefined ||
    conditions.ifMatch !== undefined ||
    conditions.ifUnmodifiedSince !== undefined
  );
}

/**
 * The field list handed to `writeHead`, reused by every send: Node turns it into the header block
 * before `writeHead` returns and keeps no reference, so a send allocates no array of its own. It is
 * written by index and cut to length at the end: emptying it first (`length = 0`) would let V8 drop
 * its backing store and grow a new one, push by push, on every send.
 */
const fields: string[] = [];

/** The representation's fields (those named in `only`, when given) and the three every send carries. */
function sendFields(response: StoredResponse, representation: Representation, context: DeliverContext, only?: ReadonlySet<string>): string[] {
  const { names, values } = representation.shape;
  let at = 0;
  let owned = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] ?? '';
    const value = values[i] ?? representation.ownValue(owned++);
    if (only !== undefined && !only.has(name)) continue;
    fields[at++] = name;
    fields[at++] = value;
  }
  fields.length = respondFields(fields, at, ageSeconds(response, context.now), context.cacheStatus, context.requestId);
  return fields;
}

/** What `sendFields` makes, as HTTP/1.1 header text from the shape's `text` (field-shapes.ts), without `Content-Length`. */
function sendText(text: FieldText, response: StoredResponse, representation: Representation, context: DeliverContext): string {
  const { pieces, slots } = text;
  let head = pieces[0] ?? '';
  for (let j = 0; j < slots.length; j++) head += representation.ownValue(slots[j] ?? 0) + (pieces[j + 1] ?? '');
  return head + respondText(ageSeconds(response, context.now), context.cacheStatus, context.requestId);
}

const PRECONDITION_FAILED = problem('precondition-failed', 'If-Match or If-Unmodified-Since does not hold for the stored response (RFC 9110 §13.1.1, §13.1.4)');

/**
 * RFC 9110 §8.8: the validators of the representation sent, its own entity tag (each coding has
 * one, ../shared/encoding/negotiate.ts) and the stored answer's Last-Modified. If-Match and
 * If-Range compare against these (§13.1.1, §13.1.5: the strong comparison names one representation).
 */
function sentValidators(response: StoredResponse, representation: Representation): Validators {
  return { etag: representation.etag, lastModified: response.lastModified };
}

/**
 * RFC 9110 §14.2 and §15.3.7: a single range of the representation sent (a range applies to the
 * selected representation, so to its coded bytes, §14.1) as a 206, with its fields, `Content-Length`
 * of the part and `Content-Range`; the 416 problem when no range is satisfiable (§15.5.17);
 * undefined when the whole representation is to be sent.
 */
function deliverRange(
  res: Reply,
  response: StoredResponse,
  representation: Representation,
  context: DeliverContext,
  range: RangeRequest,
): Delivered | Problem | undefined {
  const { body } = representation;
  const answer = rangeAnswer(range, body.length, sentValidators(response, representation), response.field('date'));
  if (answer.kind === 'whole') return undefined;
  if (answer.kind === 'unsatisfiable')
    return problem('range-not-satisfiable', `no range asked for overlaps the ${body.length} bytes of the representation`, {
      'content-range': `bytes */${body.length}`,
    });
  const part = sendFields(response, representation, context);
  for (let i = 0; i < part.length; i += 2) if (part[i] === 'content-length') part[i + 1] = String(answer.end - answer.start + 1);
  part.push('content-range', `bytes ${answer.start}-${answer.end}/${body.length}`);
  sendWhole(res, 206, part, body.subarray(answer.start, answer.end + 1));
  return { status: 206, bytes: answer.end - answer.start + 1, encoding: representation.coding };
}

/**
 * Sends `representation` of `response`: the one negotiation chose for this request; or, when a
 * precondition fails or no range can be satisfied, sends nothing and returns the problem.
 */
export function deliver(res: Reply, response: StoredResponse, representation: Representation, context: DeliverContext): Delivered | Problem {
  // RFC 9110 §13.2.1: conditions are evaluated only where a 2xx would otherwise be sent; the
  // validators are looked up only when the request is conditional. A client may hold the tag of
  // any representation of the stored answer (§13.1.2: one sent before it changed the codings it
  // accepts, or the origin's own), so If-None-Match is checked against them all.
  const precondition =
    response.status >= 200 && response.status < 300 && isConditional(context.conditions)
      ? preconditionStatus(context.conditions, sentValidators(response, representation), response.field('date'), response.etags)
      : 200;
  if (precondition === 412) return PRECONDITION_FAILED;
  if (precondition === 304) {
    sendWhole(res, 304, sendFields(response, representation, context, NOT_MODIFIED_FIELDS), undefined);
    return { status: 304, bytes: 0 };
  }
  // RFC 9110 §13.2.2 step 5: Range, with its If-Range, after the other conditions.
  const ranged = context.range === undefined || response.status !== 200 ? undefined : deliverRange(res, response, representation, context, context.range);
  if (ranged !== undefined) return ranged;
  const body = context.isHead ? undefined : representation.body;
  const { text } = representation.shape;
  if (text !== undefined && canSendHeadText && !isStream(res))
    sendHeadText(res, response.status, sendText(text, response, representation, context), text.dated, representation.bodyLength, body);
  else sendWhole(res, response.status, sendFields(response, representation, context), body);
  return { status: response.status, bytes: body?.length ?? 0, encoding: representation.coding };
}
