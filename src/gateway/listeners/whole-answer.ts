/**
 * Writes an answer whose fields and body are all known (a stored response, a 304, a 206): one
 * call for the head, one for the body. Over HTTP/2 the request's stream is written directly,
 * not through Node's compatibility response: its `writeHead` validates each field into a header
 * object of its own before the stream builds the frame from that again, and its `end` writes the
 * body and then ends the stream as a second write (docs/performance.md, "HTTP/2 hits").
 */
import type { ServerResponse } from 'node:http';
import { http2Stream } from '../../shared/http2-stream.ts';

/**
 * Sends `status` with `fields` (flat `[name, value, …]`, lowercase; the caller's own list, which
 * this may add to) and `body`, or no body (HEAD, 304).
 */
export function sendWhole(res: ServerResponse, status: number, fields: string[], body: Buffer | undefined): void {
  const stream = http2Stream(res);
  if (stream === undefined) {
    res.writeHead(status, fields);
    res.end(body);
    return;
  }
  // As the compatibility response does: a stream the client has reset takes nothing more.
  if (stream.destroyed || stream.closed) return;
  fields.push(':status', String(status));
  // A 204 or 304 ends the stream in `respond` already; a body written after that would be an error.
  if (body === undefined || body.length === 0) {
    stream.respond(fields, { endStream: true });
    return;
  }
  stream.respond(fields);
  stream.end(body);
}
