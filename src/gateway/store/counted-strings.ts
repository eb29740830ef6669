/**
 * Strings kept one after another in one latin1 text, each after its length: one character below
 * SHORT, else two (SHORT and the high byte, then the low one). A record's head holds its strings
 * so (entry-record.ts), and a representation read from it finds its own values there when first
 * asked for (stored-response.ts).
 */

/** A length below this takes one character. */
export const SHORT = 0x80;

/** The longest string two characters can count. */
export const LONGEST_COUNTED = 0x7fff;

/** `strings`, each after its length (a RangeError for one longer than LONGEST_COUNTED). */
export function counted(strings: readonly string[]): string {
  let text = '';
  for (const string of strings) {
    const { length } = string;
    if (length > LONGEST_COUNTED) throw new RangeError('a string too long to count');
    text += length < SHORT ? String.fromCharCode(length) : String.fromCharCode(SHORT | (length >> 8), length & 0xff);
    text += string;
  }
  return text;
}

/** Where the string whose length is at `at` of `text` begins. */
export function startOf(text: string, at: number): number {
  return text.charCodeAt(at) < SHORT ? at + 1 : at + 2;
}

/** Where the string whose length is at `at` of `text` ends: where the next one's length is. */
export function endOf(text: string, at: number): number {
  const first = text.charCodeAt(at);
  return first < SHORT ? at + 1 + first : at + 2 + (((first & ~SHORT) << 8) | text.charCodeAt(at + 1));
}

/** The `count` strings from `at` of `text`, in a list of their own. */
export function countedStrings(text: string, at: number, count: number): string[] {
  const strings = new Array<string>(count);
  let p = at;
  for (let i = 0; i < count; i++) {
    const end = endOf(text, p);
    strings[i] = text.slice(startOf(text, p), end);
    p = end;
  }
  return strings;
}
