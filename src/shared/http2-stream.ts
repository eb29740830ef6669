/**
 * The HTTP/2 stream behind a request or response of Node's compatibility API
 * (Http2ServerRequest, Http2ServerResponse); undefined for node:http's own, which have none.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

export function http2Stream(message: IncomingMessage | ServerResponse): ServerHttp2Stream | undefined {
  return (message as { readonly stream?: ServerHttp2Stream }).stream;
}
