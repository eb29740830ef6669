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
export function respondOnStream(stream: ServerHttp2Stream, fields: string[], endStream: boolean): void {
  // Node reads the list of names never to index from the field list's `sensitiveHeaders` symbol.
  (fields as string[] & { [sensitiveHeaders]?: readonly string[] })[sensitiveHeaders] = NEVER_INDEXED;
  stream.respond(fields, endStream ? END_STREAM : undefined);
}
