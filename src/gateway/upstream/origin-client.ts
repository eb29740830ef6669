/**
 * The gateway's only way to the origin: one undici Pool with keep-alive, a bounded number of
 * connections, and connect/headers/body timeouts. Fills read a whole body (bounded); relays get
 * the body as a stream. Failures come back as values, mapped by upstream-failure.ts, never as
 * exceptions.
 *
 * Idle sockets are retired before the origin's keep-alive timeout: undici honours the origin's
 * `Keep-Alive: timeout=N` hint minus a margin. A request that still meets a socket the origin
 * closed at that moment (reset before any response byte) is sent once more on a new connection
 * when it is idempotent and has no body to replay (RFC 9110 §9.2.2).
 */
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import type { Config } from '../../config/schema.ts';
import type { HeaderFields } from '../rules/cache-control.ts';
import { hasNoContent } from '../rules/message.ts';
import type { UpstreamResponse } from '../rules/storage.ts';
import { upstreamFailure, type UpstreamFailure } from './upstream-failure.ts';

export interface OriginRequest {
  readonly method: string;
  /** Origin-form target: path and query. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** A request body to stream (relays only); never replayed. */
  readonly body?: Readable | undefined;
  /** Hears each 1xx the origin sends before its final answer (RFC 9110 §15.2), to relay it. */
  readonly onInterim?: ((status: number, headers: HeaderFields) => void) | undefined;
}

export type OriginAnswer = { readonly ok: true; readonly response: UpstreamResponse } | { readonly ok: false; readonly failure: UpstreamFailure };

/** An answer whose body has not been read yet. */
export interface OpenedAnswer {
  readonly status: number;
  readonly headers: HeaderFields;
  readonly body: Readable;
}

export type Opened = { readonly ok: true; readonly answer: OpenedAnswer } | { readonly ok: false; readonly failure: UpstreamFailure };

/** RFC 9110 §9.2.2. */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** Errors of a connection that closed under a request before it was answered. */
const RESET_BEFORE_ANSWER: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * Drops a body without reading it. undici reports the abort as an error on the stream, and an
 * error nobody listens for would be thrown into the event loop.
 */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Failures that say the origin could not be reached at all, not that one exchange went wrong. */
const UNREACHABLE: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

const EMPTY = Buffer.alloc(0);

const TOO_LARGE = Object.assign(new Error('the origin response is larger than the gateway accepts'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' });

export class OriginClient {
  readonly #pool: Pool;
  readonly #maxResponseBytes: number;
  readonly #onUnreachable: () => void;
  /** The origin's authority (`host:port`), as the origin sees itself named in every request. */
  readonly authority: string;

  /** `onUnreachable` hears of every request that could not reach the origin at all. */
  constructor(config: Config, onUnreachable: () => void = () => undefined) {
    const origin = config['gateway.origin'];
    this.#pool = new Pool(origin, {
      connections: config['gateway.upstream.connections'],
      pipelining: 1,
      connectTimeout: config['gateway.upstream.connectTimeoutMs'],
      headersTimeout: config['gateway.upstream.headersTimeoutMs'],
      bodyTimeout: config['gateway.upstream.bodyTimeoutMs'],
      keepAliveTimeout: config['gateway.upstream.keepAliveTimeoutMs'],
    });
    this.#maxResponseBytes = config['gateway.upstream.maxResponseBytes'];
    this.#onUnreachable = onUnreachable;
    this.authority = new URL(origin).host;
  }

  /** Sends a request and returns once the response headers are in; the body is the caller's to read or destroy. */
  async open(request: OriginRequest): Promise<Opened> {
    const { onInterim } = request;
    const options: Dispatcher.RequestOptions = { method: request.method, path: request.target, headers: request.headers, body: request.body ?? null };
    // undici hands each 1xx to `onInfo` and goes on waiting for the final answer (api-request.js).
    if (onInterim !== undefined)
      options.onInfo = (info) => {
        onInterim(info.statusCode, info.headers);
      };
    try {
      let answer;
      try {
        answer = await this.#pool.request(options);
      } catch (err) {
        if (!this.#retryable(request, err)) throw err;
        answer = await this.#pool.request(options);
      }
      return { ok: true, answer: { status: answer.statusCode, headers: answer.headers, body: answer.body } };
    } catch (err) {
      const failure = upstreamFailure(err);
      if (UNREACHABLE.has(failure.code)) this.#onUnreachable();
      return { ok: false, failure };
    }
  }

  /**
   * Sends a request and reads the whole response, at most `gateway.upstream.maxResponseBytes`.
   * `onHeaders` sees the status and fields before the body is read.
   */
  async fetch(request: OriginRequest, onHeaders?: (status: number, headers: HeaderFields) => void): Promise<OriginAnswer> {
    const opened = await this.open(request);
    if (!opened.ok) return opened;
    const { status, headers, body } = opened.answer;
    onHeaders?.(status, headers);
    if (hasNoContent(status, request.method)) {
      discard(body);
      return { ok: true, response: { status, headers, body: EMPTY } };
    }
    try {
      return { ok: true, response: { status, headers, body: await this.#readAll(body) } };
    } catch (err) {
      discard(body);
      return { ok: false, failure: upstreamFailure(err) };
    }
  }

  async #readAll(body: Readable): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > this.#maxResponseBytes) throw TOO_LARGE;
      chunks.push(chunk);
    }
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
  }

  #retryable(request: OriginRequest, err: unknown): boolean {
    if (request.body !== undefined || !IDEMPOTENT.has(request.method)) return false;
    return RESET_BEFORE_ANSWER.has(upstreamFailure(err).code);
  }

  /**
   * The origin connections open, and the requests waiting for one. undici's own count of free
   * connections is not kept up to date between requests (a pool with one idle connection reports
   * none free), so it is not offered; requests that wait for long say what a lost or a saturated
   * pool would.
   */
  get connections(): { readonly open: number; readonly waiting: number } {
    const { connected, queued } = this.#pool.stats;
    return { open: connected, waiting: queued };
  }

  /** Called after the API listener has drained: any fill still running has no one to answer. */
  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
