/**
 * Every HTTP/2 stream or connection the listener refuses or cuts is counted (one counter, a reason
 * label) and logged, so that an attack shows in the metrics and the log rather than only in a
 * client's errors. The log is bounded: an attack makes refusals by the thousand a second, and one
 * line per reason per second, with the number left out since the last, says as much.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../shared/logger.ts';
import type { ListenerMetrics } from './listener-metrics.ts';

/** Why; bounded, a metric label. */
export type Http2Refusal = 'send-timeout' | 'queue-full' | 'rapid-reset' | 'bad-preface' | 'preface-timeout' | 'protocol-error' | 'flood';

const LOG_INTERVAL_MS = 1000;

export class Http2Refusals {
  readonly #metrics: ListenerMetrics;
  readonly #logger: Logger;
  readonly #lastLogged = new Map<Http2Refusal, number>();
  readonly #unlogged = new Map<Http2Refusal, number>();

  constructor(metrics: ListenerMetrics, logger: Logger) {
    this.#metrics = metrics;
    this.#logger = logger;
  }

  /** Counts a refusal and logs it, unless one of the same reason was logged within the last second. */
  refused(reason: Http2Refusal, scope: 'stream' | 'connection', remoteAddress: string | undefined): void {
    this.#metrics.http2Refused(reason);
    const now = performance.now();
    const last = this.#lastLogged.get(reason);
    if (last !== undefined && now - last < LOG_INTERVAL_MS) {
      this.#unlogged.set(reason, (this.#unlogged.get(reason) ?? 0) + 1);
      return;
    }
    this.#lastLogged.set(reason, now);
    const unlogged = this.#unlogged.get(reason) ?? 0;
    this.#unlogged.delete(reason);
    this.#logger.warn({ reason, scope, remoteAddress, unlogged }, 'HTTP/2 refused');
  }
}
