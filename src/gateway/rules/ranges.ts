/**
 * Range requests answered from a stored complete response (RFC 9110 §14, RFC 9111 §3.3–3.4): the
 * `Range` a GET carries, the `If-Range` that guards it (§13.1.5), and which bytes are sent. The
 * gateway never stores parts: fills ask for the whole representation, and ranges are cut from it.
 *
 * Several satisfiable ranges are answered 200 with the whole representation, which §14.2 allows
 * (a server may ignore `Range`): it spares building `multipart/byteranges` and the many-small-
 * ranges amplification §17.15 warns of, and every client that asks for several ranges copes.
 */
import { parseHttpDate } from './http-date.ts';
import type { Validators } from './validation.ts';

/** A GET's `Range` and `If-Range` fields. */
export interface RangeRequest {
  readonly range: string;
  readonly ifRange: string | undefined;
}

export type RangeAnswer =
  /** 200 with the whole representation: no usable Range, a failed If-Range, or several ranges. */
  | { readonly kind: 'whole' }
  /** 206 with bytes `start` to `end` inclusive (§15.3.7). */
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  /** 416 (§15.5.17): no range overlaps the representation. */
  | { readonly kind: 'unsatisfiable' };

const WHOLE: RangeAnswer = { kind: 'whole' };
const UNSATISFIABLE: RangeAnswer = { kind: 'unsatisfiable' };

/** §14.1.1: `first-[last]` or `-suffix`, digits only. */
const RANGE_SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

/** §14.1.1 `bytes=…` (the unit is case-insensitive, §14.1); undefined when it is not a valid byte range set. */
function rangeSpecs(
  range: string,
): { readonly first: number | undefined; readonly last: number | undefined; readonly suffix: number | undefined }[] | undefined {
  const equals = range.indexOf('=');
  if (equals === -1 || range.slice(0, equals).trim().toLowerCase() !== 'bytes') return undefined;
  const specs = [];
  for (const part of range.slice(equals + 1).split(',')) {
    const spec = part.trim();
    // RFC 9110 §5.6.1: empty list elements are tolerated.
    if (spec === '') continue;
    const match = RANGE_SPEC.exec(spec);
    if (match === null) return undefined;
    const [, first, last, suffix] = match;
    const parsed = {
      first: first === undefined ? undefined : Number(first),
      last: last === undefined || last === '' ? undefined : Number(last),
      suffix: suffix === undefined ? undefined : Number(suffix),
    };
    // §14.1.1: a last-pos below its first-pos makes the whole set invalid.
    if (parsed.first !== undefined && parsed.last !== undefined && parsed.last < parsed.first) return undefined;
    specs.push(parsed);
  }
  return specs.length === 0 ? undefined : specs;
}

function opaque(tag: string): string | undefined {
  return tag.startsWith('W/') ? undefined : tag;
}

/**
 * §13.1.5: an entity tag matches by the strong comparison (a weak tag never does); a date only
 * when it equals a Last-Modified that is strong, that is at least a second before the Date it was
 * sent with (§8.8.2.2). Anything else is false, and the whole representation is sent.
 */
export function ifRangeHolds(ifRange: string, stored: Validators, date: string | undefined): boolean {
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/"')) {
    return stored.etag !== undefined && opaque(value) !== undefined && opaque(stored.etag.trim()) === value;
  }
  const wanted = parseHttpDate(value);
  const lastModified = parseHttpDate(stored.lastModified);
  const sent = parseHttpDate(date);
  return wanted !== undefined && wanted === lastModified && sent !== undefined && sent - lastModified >= 1000;
}

/** §14.2: how a GET with `Range` is answered from a stored 200 of `length` bytes. */
export function rangeAnswer(request: RangeRequest, length: number, stored: Validators, date: string | undefined): RangeAnswer {
  if (request.ifRange !== undefined && !ifRangeHolds(request.ifRange, stored, date)) return WHOLE;
  // §14.2: a Range that is not a valid byte range set is ignored.
  const specs = rangeSpecs(request.range);
  if (specs === undefined) return WHOLE;
  const satisfiable: { start: number; end: number }[] = [];
  for (const spec of specs) {
    // §14.1.2: a suffix of 0 bytes, or a first-pos at or past the end, is unsatisfiable.
    if (spec.suffix !== undefined) {
      if (spec.suffix > 0 && length > 0) satisfiable.push({ start: Math.max(0, length - spec.suffix), end: length - 1 });
    } else if (spec.first !== undefined && spec.first < length) {
      satisfiable.push({ start: spec.first, end: Math.min(spec.last ?? length - 1, length - 1) });
    }
  }
  const [only] = satisfiable;
  if (only === undefined) return UNSATISFIABLE;
  return satisfiable.length === 1 ? { kind: 'part', start: only.start, end: only.end } : WHOLE;
}
