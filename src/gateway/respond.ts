/**
 * The one writer of the fields the gateway adds to every answer it sends: `X-Request-Id`, and,
 * when the cache took part, `Cache-Status` (RFC 9211) and, for a stored response, `Age`
 * (RFC 9111 §5.1). A stored response (deliver.ts), a relayed one (steps/forward.ts), a problem
 * (`refuse`) and the gateway's own empty answer (`answerHere`) take them from here, in the form
 * each is written in: a field list, or a field list's text.
 */

/**
 * Writes the added fields into the flat list `fields` (`[name, value, …]`) from index `at`, and
 * returns the index after them; `age` and `cacheStatus` only when given.
 */
export function respondFields(fields: string[], at: number, age: number | undefined, cacheStatus: string | undefined, requestId: string): number {
  let i = at;
  if (age !== undefined) {
    fields[i++] = 'age';
    fields[i++] = String(age);
  }
  if (cacheStatus !== undefined) {
    fields[i++] = 'cache-status';
    fields[i++] = cacheStatus;
  }
  fields[i++] = 'x-request-id';
  fields[i++] = requestId;
  return i;
}

/** The same fields as HTTP/1.1 header text, for a stored response's head written as text. */
export function respondText(age: number, cacheStatus: string, requestId: string): string {
  return `age: ${age}\r\ncache-status: ${cacheStatus}\r\nx-request-id: ${requestId}\r\n`;
}
