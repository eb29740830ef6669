/**
 * Whether the origin is up, as the gateway's `/readyz` and `catalog_gateway_origin_up` report it.
 * A background probe asks the origin's health check every `gateway.upstream.probeIntervalMs`
 * (Varnish's backend probe): a scrape or a readiness probe only reads the last result, so neither
 * ever reaches the origin. A fill that cannot reach the origin asks for a probe at once, so a
 * dead origin is noticed within a round trip rather than an interval.
 */
import { Client } from 'undici';
import { upstreamFailure } from './upstream-failure.ts';

/** A probe nudged by failing traffic runs at most this often. */
const NUDGE_GAP_MS = 250;

interface ProbeResult {
  readonly up: boolean;
  /** Why it is down, in words for `/readyz`. */
  readonly reason?: string;
}

export class OriginHealth {
  readonly #url: URL;
  readonly #client: Client;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  #last: ProbeResult = { up: false, reason: 'the origin has not been probed yet' };
  #running: Promise<void> | undefined;
  #lastStart = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  /** `url` is the health check's absolute URL; it answers 2xx when the origin is up. */
  constructor(url: URL, intervalMs: number) {
    this.#url = url;
    this.#intervalMs = intervalMs;
    this.#timeoutMs = Math.min(intervalMs, 2000);
    // Its own connection, so a probe never queues behind a saturated pool.
    this.#client = new Client(url.origin, { connectTimeout: this.#timeoutMs, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs });
  }

  get up(): boolean {
    return this.#last.up;
  }

  /** Undefined when up, otherwise why not. */
  get reason(): string | undefined {
    return this.#last.up ? undefined : this.#last.reason;
  }

  /** Probes now and then every interval; resolves after the first probe. */
  start(): Promise<void> {
    this.#timer = setInterval(() => void this.probe(), this.#intervalMs).unref();
    return this.probe();
  }

  /** Traffic failed to reach the origin: probe now unless one ran a moment ago. */
  nudge(): void {
    if (performance.now() - this.#lastStart >= NUDGE_GAP_MS) void this.probe();
  }

  probe(): Promise<void> {
    this.#running ??= this.#ask().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #ask(): Promise<void> {
    this.#lastStart = performance.now();
    const check = `the origin's health check ${this.#url.href}`;
    try {
      const answer = await this.#client.request({
        method: 'GET',
        path: this.#url.pathname + this.#url.search,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await answer.body.dump();
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      this.#last = ok ? { up: true } : { up: false, reason: `${check} answered ${answer.statusCode}` };
    } catch (err) {
      this.#last = { up: false, reason: `${check} failed: ${upstreamFailure(err).problem.detail}` };
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
    await this.#client.destroy();
  }
}
