/**
 * Targeted cache control (RFC 9213): `CDN-Cache-Control`, or a field addressed to this cache
 * alone, takes the place of `Cache-Control` and `Expires` for this cache. The gateway's target
 * list is `gateway.cache.targetedFields`, in order; the first field on it that is present with a
 * valid, non-empty value decides (§2.2). Its value is a Structured Fields Dictionary (RFC 8941
 * §3.2), parsed strictly: a value that does not parse is ignored as if it were absent.
 */
import { parseCacheControl, type Directives, type HeaderFields } from './cache-control.ts';

/** The directives that decide for this cache, and whether a targeted field supplied them. */
export interface ResponseDirectives {
  readonly directives: Directives;
  /** RFC 9213 §2.2: a targeted field decided, so `Expires` is ignored too. */
  readonly targeted: boolean;
}

/** RFC 8941 §4.2.3.3 key: lcalpha or `*`, then lcalpha, digits, `_ - . *`. */
const KEY = /^[a-z*][a-z0-9_\-.*]*/;
/** §4.2.4: a bare item (Integer or Decimal, String, Token, Byte Sequence, Boolean). */
const BARE_ITEM =
  /^(?:(-?\d{1,15}(?:\.\d{1,3})?)|"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"|([A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*)|:([A-Za-z0-9+/=]*):|\?([01]))/;

class Cursor {
  #at = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  done(): boolean {
    return this.#at >= this.#text.length;
  }

  peek(): string {
    return this.#text[this.#at] ?? '';
  }

  skip(chars: string): void {
    while (!this.done() && chars.includes(this.peek())) this.#at++;
  }

  take(pattern: RegExp): RegExpExecArray | undefined {
    const match = pattern.exec(this.#text.slice(this.#at)) ?? undefined;
    if (match !== undefined) this.#at += match[0].length;
    return match;
  }

  eat(char: string): boolean {
    if (this.peek() !== char) return false;
    this.#at++;
    return true;
  }
}

/**
 * A bare item as a directive value: a String as its content, an Integer or Token as written,
 * `?1` as a directive without a value, `?0` as no directive; undefined when none parses.
 */
function bareItem(cursor: Cursor): string | boolean | undefined {
  const match = cursor.take(BARE_ITEM);
  if (match === undefined) return undefined;
  const [whole, number, string, token, bytes, boolean] = match;
  if (string !== undefined) return string.replace(/\\(["\\])/g, '$1');
  if (boolean !== undefined) return boolean === '1';
  // §4.2.4.1: a number with more than 12 integer digits before its point is not valid.
  if (number !== undefined && number.includes('.') && number.replace(/^-/, '').indexOf('.') > 12) return undefined;
  return number ?? token ?? (bytes === undefined ? undefined : whole);
}

/** §4.2.3.2: parameters are read for validity and otherwise ignored (RFC 9213 §2.1). */
function parameters(cursor: Cursor): boolean {
  while (cursor.eat(';')) {
    cursor.skip(' ');
    if (cursor.take(KEY) === undefined) return false;
    if (cursor.eat('=') && bareItem(cursor) === undefined) return false;
  }
  return true;
}

/** §4.2.1.2: an Inner List, which no cache directive takes; read for validity only. */
function innerList(cursor: Cursor): boolean {
  cursor.skip(' ');
  while (!cursor.eat(')')) {
    if (bareItem(cursor) === undefined || !parameters(cursor)) return false;
    const spaced = cursor.peek() === ' ';
    cursor.skip(' ');
    if (!spaced && cursor.peek() !== ')') return false;
  }
  return parameters(cursor);
}

/** RFC 8941 §4.2.2: a Dictionary as directives; undefined when the value is not one. */
export function parseDictionary(text: string): Directives | undefined {
  const cursor = new Cursor(text);
  const directives = new Map<string, string | true>();
  cursor.skip(' ');
  while (!cursor.done()) {
    const key = cursor.take(KEY)?.[0];
    if (key === undefined) return undefined;
    let value: string | boolean | undefined = true;
    if (cursor.eat('=')) {
      if (cursor.eat('(')) {
        if (!innerList(cursor)) return undefined;
        // An Inner List is no directive value: the member is left out.
        value = false;
      } else {
        value = bareItem(cursor);
        if (value === undefined) return undefined;
      }
    }
    if (!parameters(cursor)) return undefined;
    // §4.2.2: a later member of the same name replaces an earlier one.
    directives.delete(key);
    if (value !== false) directives.set(key, value);
    cursor.skip(' \t');
    if (cursor.done()) break;
    if (!cursor.eat(',')) return undefined;
    cursor.skip(' \t');
    // §4.2.2: a trailing comma makes the whole value invalid.
    if (cursor.done()) return undefined;
  }
  return directives;
}

/**
 * RFC 9213 §2.2: the first field of `targets` (lower-case names) present with a valid, non-empty
 * Dictionary decides; otherwise `Cache-Control` (RFC 9111 §5.2) does.
 */
export function responseDirectives(headers: HeaderFields, targets: readonly string[]): ResponseDirectives {
  for (const name of targets) {
    const value = headers[name];
    if (value === undefined) continue;
    const directives = parseDictionary(typeof value === 'string' ? value : value.join(', '));
    if (directives !== undefined && directives.size > 0) return { directives, targeted: true };
  }
  return { directives: parseCacheControl(headers['cache-control']), targeted: false };
}
