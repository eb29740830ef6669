/**
 * Whether a request carries content, and whether an answer leaves some of it unread. Content the
 * server answers before reading to its end (a request refused unread, or too large) Node reads and
 * discards to keep the connection open, for as long as the client sends, up to
 * `http.requestTimeoutMs`, which on a fast link is gigabytes of input for one refusal. Such an
 * answer closes the connection instead. Both servers' problems go through here (problem.ts), and
 * the origin's documents too.
 */
import type { RequestHead } from './message-seam.ts';

/** Whether `req` carries content, from its framing alone (nothing is read). */
export function hasBody(req: RequestHead): boolean {
  // RFC 9113 §8.1: an HTTP/2 request has content unless its HEADERS frame ended the stream,
  // `Content-Length` or not.
  const { stream } = req;
  if (stream !== undefined) return !stream.endAfterHeaders;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether `req` has content not yet read to its end. While a handler runs, `complete` is false even
 * for a request without content (the parser marks it after the handler returns), hence the framing.
 */
export function bodyLeftUnread(req: RequestHead): boolean {
  return !req.complete && hasBody(req);
}
