/**
 * The gateway's only way to the origin for cached routes: one undici Pool with keep-alive, a
 * bounded number of connections, connect/headers/body timeouts and a largest response size.
 * Every request is a plain GET of a canonical target; failures come back as values, mapped by
 * upstream-failure.ts, never as exceptions.
 */
import { Client, Pool } from 'undici';
import type { Config } from '../config/schema.ts';
import type { UpstreamResponse } from './cache-policy.ts';
import type { CacheKey } from './response-cache.ts';
import { upstreamFailure, type UpstreamFailure } from './upstream-failure.ts';

/** What the gateway forwards from the client: the origin authenticates too, and logs the id. */
export interface ForwardedHeaders {
  readonly authorization: string | undefined;
  readonly accept: string | undefined;
  readonly requestId: string;
}

/** The request header names forwarded; a `Vary` on one of them makes a response vary per client. */
export const FORWARDED_HEADER_NAMES: ReadonlySet<string> = new Set(['authorization', 'accept', 'x-request-id']);

export type OriginAnswer = { readonly ok: true; readonly response: UpstreamResponse } | { readonly ok: false; readonly failure: UpstreamFailure };

const PROBE_TIMEOUT_MS = 1000;

export class OriginClient {
  readonly #pool: Pool;
  /** Its own connection, so a readiness probe never queues behind a saturated pool. */
  readonly #probe: Client;

  constructor(config: Config) {
    const origin = config['gateway.origin'];
    this.#pool = new Pool(origin, {
      connections: config['gateway.upstream.connections'],
      pipelining: 1,
      connectTimeout: config['gateway.upstream.connectTimeoutMs'],
      headersTimeout: config['gateway.upstream.headersTimeoutMs'],
      bodyTimeout: config['gateway.upstream.bodyTimeoutMs'],
      maxResponseSize: config['gateway.upstream.maxResponseBytes'],
    });
    this.#probe = new Client(origin, { connectTimeout: PROBE_TIMEOUT_MS, headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
  }

  async get(target: CacheKey, forwarded: ForwardedHeaders): Promise<OriginAnswer> {
    const headers: Record<string, string> = { 'x-request-id': forwarded.requestId };
    if (forwarded.authorization !== undefined) headers.authorization = forwarded.authorization;
    if (forwarded.accept !== undefined) headers.accept = forwarded.accept;
    try {
      const answer = await this.#pool.request({ method: 'GET', path: target, headers });
      const body = Buffer.from(await answer.body.arrayBuffer());
      return { ok: true, response: { status: answer.statusCode, headers: answer.headers, body } };
    } catch (err) {
      return { ok: false, failure: upstreamFailure(err) };
    }
  }

  /** True when the origin answers HTTP at all (any status): it is reachable. */
  async reachable(): Promise<boolean> {
    try {
      const answer = await this.#probe.request({ method: 'HEAD', path: '/', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await answer.body.dump();
      return true;
    } catch {
      return false;
    }
  }

  /** Called after the API listener has drained: any fill still running has no one to answer. */
  async close(): Promise<void> {
    await Promise.all([this.#pool.destroy(), this.#probe.destroy()]);
  }
}
