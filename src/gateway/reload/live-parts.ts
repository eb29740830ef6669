/**
 * The parts of a gateway that a reload changes (live-config.ts): the request path's settings
 * (routes, rate limits, target bound, trusted proxies), the API listener's limits, the log level.
 */
import type { Config, ConfigKey } from '../../config/schema.ts';
import { ClientAddress } from '../../shared/client-address.ts';
import { httpLimits } from '../../shared/http-server.ts';
import type { Logger } from '../../shared/logger.ts';
import type { PipelineDeps } from '../exchange.ts';
import type { Listener } from '../listeners/listener.ts';
import type { PipelineSettings } from '../pipeline.ts';
import { RouteTable } from '../routes/route-table.ts';
import { TokenBuckets } from '../steps/token-bucket.ts';
import type { LiveConfig } from './live-config.ts';

/** What the request path is given once, whatever a reload changes. */
export type SharedDeps = Omit<PipelineDeps, 'maxTargetBytes' | 'clients' | 'tokenLimits' | 'ipLimits'>;

interface Limit {
  readonly field: 'tokenLimits' | 'ipLimits';
  readonly rate: 'gateway.rateLimit.perTokenPerSecond' | 'gateway.rateLimit.perIpPerSecond';
  readonly burst: 'gateway.rateLimit.perTokenBurst' | 'gateway.rateLimit.perIpBurst';
  readonly policy: string;
  readonly what: string;
}

const PER_TOKEN: Limit = { field: 'tokenLimits', rate: 'gateway.rateLimit.perTokenPerSecond', burst: 'gateway.rateLimit.perTokenBurst', policy: 'per-token', what: 'token subject' };
const PER_IP: Limit = { field: 'ipLimits', rate: 'gateway.rateLimit.perIpPerSecond', burst: 'gateway.rateLimit.perIpBurst', policy: 'per-address', what: 'client address' };

function sameValues(a: Config, b: Config, keys: readonly ConfigKey[]): boolean {
  return keys.every((key) => a[key] === b[key]);
}

/** The running configuration and the request path's dependencies built from it. */
interface Running {
  readonly config: Config;
  readonly deps: PipelineDeps;
}

/** A limit whose rate and burst did not change keeps its buckets, so a reload hands no client a fresh burst. */
function buckets(limit: Limit, next: Config, shared: SharedDeps, running: Running | undefined): TokenBuckets {
  if (running !== undefined && sameValues(running.config, next, [limit.rate, limit.burst])) return running.deps[limit.field];
  return new TokenBuckets(next[limit.rate], next[limit.burst], limit.policy, limit.what, shared.now);
}

function settingsFor(next: Config, shared: SharedDeps, running?: Running): PipelineSettings {
  return {
    routes: new RouteTable(next['gateway.routes'], next['auth.requiredScope'], next['gateway.cache.targetedFields']),
    deps: {
      ...shared,
      maxTargetBytes: next['http.maxTargetBytes'],
      clients: new ClientAddress(next['http.trustedProxies']),
      tokenLimits: buckets(PER_TOKEN, next, shared, running),
      ipLimits: buckets(PER_IP, next, shared, running),
    },
  };
}

/** The request path's settings, read through one reference that a reload swaps. */
export function livePipeline(live: LiveConfig, shared: SharedDeps): () => PipelineSettings {
  let settings = settingsFor(live.current, shared);
  live.add({
    prepare(next) {
      const built = settingsFor(next, shared, { config: live.current, deps: settings.deps });
      return () => {
        settings = built;
      };
    },
  });
  return () => settings;
}

/** The API listener's limits follow a reload (listeners/listener.ts applies them). */
export function liveListenerLimits(live: LiveConfig, listener: Listener): void {
  live.add({
    prepare(next) {
      const limits = httpLimits(next);
      return () => {
        listener.applyLimits(limits);
      };
    },
  });
}

export function liveLogLevel(live: LiveConfig, logger: Logger): void {
  live.add({
    prepare(next) {
      return () => {
        logger.level = next['log.level'];
      };
    },
  });
}
