/**
 * Reload is "build a new config, validate, swap" (nginx's `-s reload`, Prometheus's
 * `/-/reload`). The running configuration is one reference; each part of the gateway that can
 * change live registers a `LivePart` that builds its new state from a candidate configuration
 * and hands back the swap. A reload loads and validates the whole file (the start-up loader, so
 * a bad key is refused with the same words), builds every part, and only when all of them have
 * built runs the swaps, synchronously: a request sees the old settings or the new, never a mix,
 * and a bad file or a part that cannot build changes nothing.
 *
 * Keys outside `LIVE_KEYS` (listeners, the cache's bound, the origin pool, the fleet) keep their
 * running values; a reload that changes them names them in one log line as waiting for a
 * restart. The TLS files are re-read by a part of their own (live-parts.ts `liveTlsFiles`): a pair
 * that would not load at the next start refuses the reload, though the certificate reload
 * (listeners/certificate-reload.ts) is what swaps a new pair in.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Config, ConfigKey } from '../../config/schema.ts';
import type { Logger } from '../../shared/logger.ts';

/** What a reload applies to a running gateway (docs/operations.md, "Reload"). */
export const LIVE_KEYS = [
  'log.level',
  'auth.requiredScope',
  'gateway.routes',
  'gateway.cache.targetedFields',
  'gateway.rateLimit.perTokenPerSecond',
  'gateway.rateLimit.perTokenBurst',
  'gateway.rateLimit.perIpPerSecond',
  'gateway.rateLimit.perIpBurst',
  'http.maxTargetBytes',
  'http.trustedProxies',
  'http.headersTimeoutMs',
  'http.requestTimeoutMs',
  'http.keepAliveTimeoutMs',
  'http.maxConnections',
] as const satisfies readonly ConfigKey[];

const LIVE: ReadonlySet<ConfigKey> = new Set(LIVE_KEYS);

export interface LivePart {
  /**
   * Builds this part's state for `next` without touching the running one; throws to refuse the
   * reload. Returns the swap, run only once every part has built. `loaded` is the configuration as
   * loaded, the keys that wait for a restart included: what the next start would run with.
   */
  prepare(next: Config, loaded: Config): () => void;
}

export type ReloadOutcome =
  { readonly ok: true; readonly applied: readonly ConfigKey[]; readonly needsRestart: readonly ConfigKey[] } | { readonly ok: false; readonly error: string };

export class LiveConfig {
  #config: Config;
  readonly #parts: LivePart[] = [];
  readonly #logger: Logger;
  #lastOk = true;
  #lastSuccessAt = Date.now();

  constructor(config: Config, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  /** The configuration serving now: the start-up values, with the live keys of the last reload. */
  get current(): Config {
    return this.#config;
  }

  add(part: LivePart): void {
    this.#parts.push(part);
  }

  /** Loads with `load` (the start-up loader, re-reading the file and the environment) and applies it. */
  reload(load: () => Config): ReloadOutcome {
    let loaded: Config;
    try {
      loaded = load();
    } catch (err) {
      return this.#refused(err);
    }
    return this.apply(loaded);
  }

  /** Applies a configuration already loaded and validated (a worker's, from its primary). */
  apply(loaded: Config): ReloadOutcome {
    const changed = (Object.keys(loaded) as ConfigKey[]).filter((key) => JSON.stringify(loaded[key]) !== JSON.stringify(this.#config[key]));
    const applied = changed.filter((key) => LIVE.has(key));
    const needsRestart = changed.filter((key) => !LIVE.has(key));
    const next = Object.freeze({ ...this.#config, ...Object.fromEntries(applied.map((key) => [key, loaded[key]])) }) as Config;
    let swaps: (() => void)[];
    try {
      swaps = this.#parts.map((part) => part.prepare(next, loaded));
    } catch (err) {
      return this.#refused(err);
    }
    for (const swap of swaps) swap();
    this.#config = next;
    this.#lastOk = true;
    this.#lastSuccessAt = Date.now();
    this.#logger.info({ applied }, 'configuration reloaded');
    if (needsRestart.length > 0)
      this.#logger.warn({ needsRestart }, `configuration reloaded, but these changes apply only at a restart: ${needsRestart.join(', ')}`);
    return { ok: true, applied, needsRestart };
  }

  #refused(err: unknown): ReloadOutcome {
    const error = err instanceof Error ? err.message : String(err);
    this.#lastOk = false;
    this.#logger.error({ error }, `configuration reload refused, still serving the previous one: ${error}`);
    return { ok: false, error };
  }

  /** Prometheus's own pair (`prometheus_config_last_reload_successful`, `…_success_timestamp_seconds`). */
  registerGauges(registry: Registry): void {
    const live = (): { ok: boolean; at: number } => ({ ok: this.#lastOk, at: this.#lastSuccessAt });
    new Gauge({
      name: 'catalog_gateway_config_last_reload_successful',
      help: 'Whether the last configuration reload (SIGHUP) succeeded: 1, or 0 when it was refused and the previous configuration still serves.',
      registers: [registry],
      collect() {
        this.set(live().ok ? 1 : 0);
      },
    });
    new Gauge({
      name: 'catalog_gateway_config_last_reload_success_timestamp_seconds',
      help: 'When the configuration was last loaded successfully, at start or by a reload (Unix seconds).',
      registers: [registry],
      collect() {
        this.set(live().at / 1000);
      },
    });
  }
}
