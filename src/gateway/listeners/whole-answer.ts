/**
 * Writes an answer whose fields and body are all known (a stored response, a 304, a 206): one
 * call for the head, one for the body. Over HTTP/2 the answer is the request's stream, written
 * with `respond` and `end`: Node's compatibility response would validate each field into a header
 * object of its own before the stream built the frame from that again, and end with a second
 * write (docs/performance.md, "HTTP/2 hits written to the stream").
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { sendOnStream } from '../../shared/http2-stream.ts';
import { isStream, type Reply } from '../../shared/message-seam.ts';
import { internals, storeHead } from '../../shared/node-http-internals.ts';

/**
 * Sends `status` with `fields` (flat `[name, value, …]`, lowercase; the caller's own list, which
 * this may add to) and `body`, or no body (HEAD, 304).
 */
export function sendWhole(reply: Reply, status: number, fields: string[], body: Buffer | undefined): void {
  if (!isStream(reply)) {
    reply.writeHead(status, fields);
    reply.end(body);
    return;
  }
  fields.push(':status', String(status));
  sendOnStream(reply, fields, body);
}

/** Whether node:http takes a head as text (node-http-internals.ts); where it does not, heads go through `writeHead` (deliver.ts). */
export const canSendHeadText = internals.headText;

const STATUS_LINES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(STATUS_CODES).map(([status, reason]) => [status, `HTTP/1.1 ${status} ${reason ?? 'unknown'}\r\n`])),
);

function statusLine(status: number): string {
  return STATUS_LINES[status] ?? `HTTP/1.1 ${status} unknown\r\n`;
}

/** The one field Node is handed, so that it frames the body by it and adds no length of its own. */
const lengthField = ['content-length', ''];

/**
 * Sends, over HTTP/1.1, `status` with header text made from checked parts (`fields`: lines that
 * end in CRLF, without `Content-Length`, field-shapes.ts), `length` as its `Content-Length`, and
 * `body`, or no body (HEAD). What `writeHead` then adds is added here too: the status line, and
 * Node's `Date` unless the text is `dated`.
 */
export function sendHeadText(res: ServerResponse, status: number, fields: string, dated: boolean, length: number, body: Buffer | undefined): void {
  res.statusCode = status;
  res.statusMessage = STATUS_CODES[status] ?? 'unknown';
  res.sendDate = !dated;
  lengthField[1] = String(length);
  storeHead(res, statusLine(status) + fields, lengthField);
  res.end(body);
}
