/**
 * An HTTP/2 request as the request path reads it (../../shared/message-seam.ts): the stream, the
 * header object Node hands over with it, and the connection's peer, with no object of Node's
 * compatibility API. What those objects gave a hit, the steps read here or write on the stream.
 *
 * A step that streams a body either way (a request relayed to the origin with its content, an
 * origin's answer relayed as it comes) takes Node's compatibility request and response, made from
 * the stream the first time one is asked for (`nodePair`): the relay is written against
 * node:http's streams, and those cost a relayed request little beside the origin.
 */
import { IncomingMessage, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { Http2ServerRequest, Http2ServerResponse, type ServerHttp2Stream } from 'node:http2';
import { isStream, type Reply, type RequestHead } from '../../shared/message-seam.ts';

/** The connection's peer, read once per connection and shared by its streams. */
export interface StreamPeer {
  readonly remoteAddress: string | undefined;
}

/** Node's compatibility request and response for one stream, typed as what the relay is written against. */
export interface NodePair {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

export class StreamRequest implements RequestHead {
  readonly stream: ServerHttp2Stream;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly socket: StreamPeer;
  /** Read once from the header object, a dictionary the request path would otherwise look in for each use. */
  readonly method: string | undefined;
  readonly url: string | undefined;
  #pair: NodePair | undefined;

  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[], peer: StreamPeer) {
    this.stream = stream;
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.socket = peer;
    this.method = headers[':method'] as string | undefined;
    this.url = headers[':path'] as string | undefined;
  }

  get httpVersion(): string {
    return '2.0';
  }

  get httpVersionMajor(): number {
    return 2;
  }

  get httpVersionMinor(): number {
    return 0;
  }

  /** As Node's compatibility request tells it: the content has ended, or the stream has. */
  get complete(): boolean {
    return this.#pair?.req.complete ?? (this.stream.endAfterHeaders || this.stream.destroyed);
  }

  /** Node's compatibility request and response for this stream, made on the first call. */
  nodePair(): NodePair {
    // The compatibility classes stand in for node:http's where the relay reads and writes a
    // stream of bytes; they are what Node's own 'request' event hands over for HTTP/2.
    this.#pair ??= {
      req: new Http2ServerRequest(this.stream, this.headers, {}, this.rawHeaders) as unknown as IncomingMessage,
      res: new Http2ServerResponse(this.stream) as unknown as ServerResponse,
    };
    return this.#pair;
  }
}

/**
 * The request and its answer as node:http streams, for a step that streams a body either way:
 * node:http's own over HTTP/1.1, where the request head is the IncomingMessage and the answer its
 * ServerResponse; Node's compatibility pair over HTTP/2.
 */
export function nodePair(req: RequestHead, reply: Reply): NodePair {
  if (req instanceof StreamRequest) return req.nodePair();
  if (req instanceof IncomingMessage && !isStream(reply)) return { req, res: reply };
  throw new Error('a request and an answer of different protocols');
}
