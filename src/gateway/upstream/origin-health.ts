/**
 * Whether the origin is up, as the gateway's `/readyz` and `catalog_gateway_origin_up` report it.
 * A background probe asks the origin's health check every `gateway.upstream.probeIntervalMs`
 * (Varnish's backend probe): a scrape or a readiness probe only reads the last result, so neither
 * ever reaches the origin. A fill that cannot reach the origin asks for a probe at once, so a
 * dead origin is noticed within a round trip rather than an interval.
 *
 * Without a configured health check (`gateway.upstream.probe: null`) the probe asks `GET /` of
 * the origin itself, and any answer below 500 means up: an arbitrary origin may answer its root
 * with 401 or 404, and that answer still proves it listens and serves; a 5xx, a timeout or no
 * connection means down.
 */
import { Client } from 'undici';
import type { Config } from '../../config/schema.ts';
import { parseCredentialNames, redactTarget } from '../../shared/credentials.ts';
import { upstreamFailure } from './upstream-failure.ts';

/** A probe nudged by failing traffic runs at most this often. */
const NUDGE_GAP_MS = 250;

interface ProbeResult {
  readonly up: boolean;
  /** Why it is down, in words for `/readyz`. */
  readonly reason?: string;
}

/** What the probe asks, and which answers mean up. */
interface HealthCheck {
  readonly url: URL;
  readonly isUp: (status: number) => boolean;
}

function healthCheck(config: Config): HealthCheck {
  const probe = config['gateway.upstream.probe'];
  if (probe === null) return { url: new URL('/', config['gateway.origin']), isUp: (status) => status < 500 };
  return { url: new URL(probe, config['gateway.origin']), isUp: (status) => status >= 200 && status < 300 };
}

export class OriginHealth {
  readonly #url: URL;
  readonly #shownUrl: string;
  readonly #isUp: (status: number) => boolean;
  readonly #client: Client;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  #last: ProbeResult = { up: false, reason: 'the origin has not been probed yet' };
  #running: Promise<void> | undefined;
  #lastStart = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  /** Probes what `gateway.upstream.probe` names every `gateway.upstream.probeIntervalMs`. */
  constructor(config: Config) {
    const { url, isUp } = healthCheck(config);
    const intervalMs = config['gateway.upstream.probeIntervalMs'];
    this.#url = url;
    // The reason is in /readyz, which answers whoever reaches the admin port, and in the log: a
    // password or a credential parameter in the probe's URL stays out of both.
    this.#shownUrl = redactTarget(url.href, parseCredentialNames(config['http.credentialParameters']));
    this.#isUp = isUp;
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
    const check = `the origin's health check ${this.#shownUrl}`;
    try {
      const answer = await this.#client.request({
        method: 'GET',
        path: this.#url.pathname + this.#url.search,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await answer.body.dump();
      this.#last = this.#isUp(answer.statusCode) ? { up: true } : { up: false, reason: `${check} answered ${answer.statusCode}` };
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
