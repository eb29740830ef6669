/**
 * Writes an answer whose fields and body are all known (a stored response, a 304, a 206): one
 * call for the head, one for the body. Over HTTP/2 the request's stream is written directly,
 * not through Node's compatibility response: its `writeHead` validates each field into a header
 * object of its own before the stream builds the frame from that again, and its `end` writes the
 * body and then ends the stream as a second write (docs/performance.md, "HTTP/2 hits").
 */
import { ServerResponse, STATUS_CODES } from 'node:http';
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

/**
 * The parts of node:http's response that its own `writeHead` uses and its types do not name:
 * `_storeHeader` makes the head from a status line and a field list, adding what the connection
 * needs (`Connection`, `Keep-Alive`, the framing, a `Date` when asked), and is where `writeHead`
 * ends after checking each field and joining it into the line it passes.
 */
interface Http1Response {
  _storeHeader(firstLine: string, fields: readonly string[]): void;
  readonly _expect_continue: boolean;
  readonly _sent100: boolean;
}

/** Whether this Node has that step; where it does not, heads go through `writeHead` (deliver.ts). */
export const canSendHeadText = typeof (ServerResponse.prototype as unknown as Partial<Http1Response>)._storeHeader === 'function';

const statusLines = new Map<number, string>();

function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    statusLines.set(status, line);
  }
  return line;
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
  const http1 = res as unknown as Http1Response;
  res.statusCode = status;
  res.statusMessage = STATUS_CODES[status] ?? 'unknown';
  // As `writeHead` does: a client that was to wait for 100 Continue and got an answer instead may send its body next.
  if (http1._expect_continue && !http1._sent100) res.shouldKeepAlive = false;
  res.sendDate = !dated;
  lengthField[1] = String(length);
  http1._storeHeader(statusLine(status) + fields, lengthField);
  res.end(body);
}
