/**
 * The head of an answer a server writes on an HTTP/2 stream itself (a stored response, a problem,
 * the gateway's own empty answer), and how HPACK (RFC 7541) is to carry its fields.
 *
 * nghttp2 adds each field it sends to the connection's dynamic table (4,096 bytes by default)
 * unless it knows the field to change from answer to answer (`age`, `etag`, `content-length`, a
 * few more). `X-Request-Id` changes on every answer and is not among them: each answer's id went
 * into the table and pushed the oldest entries out, the fields every answer repeats (`content-type`,
 * `cache-control`, `vary`, …), which nghttp2 then encoded and inserted again, with a table entry
 * allocated and freed for each id. Sent as a literal never indexed (§6.2.3), the id leaves the table
 * to the fields that repeat; a hit's header block grows by the id's name, a few bytes
 * (docs/performance.md, "HTTP/2 request ids kept out of the HPACK table").
 */
import { sensitiveHeaders, type ServerHttp2Stream } from 'node:http2';

/** Fields whose value is new on every answer: indexed, each would only evict fields that repeat. */
const NEVER_INDEXED: readonly string[] = ['x-request-id'];

const END_STREAM = { endStream: true } as const;

/**
 * Sends `fields` (flat `[name, value, …]`, lowercase, with `:status`) as the head of `stream`'s
 * answer; with `endStream`, as the whole answer (no body follows).
 */
function respondOnStream(stream: ServerHttp2Stream, fields: string[], endStream: boolean): void {
  // Node reads the list of names never to index from the field list's `sensitiveHeaders` symbol.
  (fields as string[] & { [sensitiveHeaders]?: readonly string[] })[sensitiveHeaders] = NEVER_INDEXED;
  stream.respond(fields, endStream ? END_STREAM : undefined);
}

/**
 * Sends a whole answer on `stream`: `fields` as its head (with `:status`), then `body`, or no body
 * (HEAD, 204, 304: `respond` ends the stream, and a body written after that would be an error).
 */
export function sendOnStream(stream: ServerHttp2Stream, fields: string[], body: Buffer | string | undefined): void {
  // As the compatibility response does: a stream the client has reset takes nothing more.
  if (stream.destroyed || stream.closed) return;
  if (body === undefined || body.length === 0) {
    respondOnStream(stream, fields, true);
    return;
  }
  respondOnStream(stream, fields, false);
  stream.end(body);
}
