/**
 * A request answered before its body was read to its end (refused unread, or too large): Node
 * reads and discards the rest to keep the connection open, for as long as the client sends, up to
 * `http.requestTimeoutMs`, which on a fast link is gigabytes of input for one refusal. Such an
 * answer closes the connection instead. Both servers' problems go through here (problem.ts), and
 * the origin's documents too.
 */
import type { IncomingMessage } from 'node:http';

/**
 * Whether `req` has a body not yet read to its end. While a handler runs, `complete` is false even
 * for a request without a body (the parser marks it after the handler returns), hence the framing
 * fields.
 */
export function bodyLeftUnread(req: IncomingMessage): boolean {
  return !req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
}
