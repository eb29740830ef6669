/**
 * The parts of a gateway that a reload changes (live-config.ts): the request path's settings
 * (routes, rate limits, target bound, trusted proxies), the API listener's limits, the log level.
 */
import type { Config, ConfigKey } from '../../config/schema.ts';
import type { CredentialNames } from '../../shared/credentials.ts';
import { ClientAddress } from '../../shared/client-address.ts';
import { httpLimits } from '../../shared/http-server.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Listener } from '../listeners/listener.ts';
import { readTlsIdentity, tlsPaths } from '../listeners/tls-identity.ts';
import type { EdgeDeps, LogDeps, PipelineSettings } from '../pipeline.ts';
import type { RouteTable } from '../routes/route-table.ts';
import { TargetMemo } from '../target-memo.ts';
import type { AuthDeps } from '../steps/authenticate.ts';
import type { CacheDeps } from '../steps/cached.ts';
import type { ForwardDeps } from '../steps/forward.ts';
import { TokenBuckets } from '../steps/token-bucket.ts';
import type { LiveConfig } from './live-config.ts';

/**
 * What the request path is given once, whatever a reload changes: each step's part less what the
 * live keys set (the target bound, the trusted proxies, the rate limits).
 */
export interface SharedDeps {
  /** `http.credentialParameters`, parsed. */
  readonly credentialNames: CredentialNames;
  /** The route table of a configuration (ProcessParts#routesOf). */
  readonly routesOf: (config: Config) => RouteTable;
  readonly now: () => number;
  readonly edge: Omit<EdgeDeps, 'targetRules' | 'targets' | 'clients' | 'ipLimits'>;
  readonly authenticate: Omit<AuthDeps, 'tokenLimits'>;
  readonly cached: Omit<CacheDeps, 'clients'>;
  readonly forward: Omit<ForwardDeps, 'clients'>;
  readonly log: LogDeps;
}

interface Limit {
  /** Where the running settings keep this limit's buckets. */
  readonly running: (settings: PipelineSettings) => TokenBuckets;
  readonly rate: 'gateway.rateLimit.perTokenPerSecond' | 'gateway.rateLimit.perIpPerSecond';
  readonly burst: 'gateway.rateLimit.perTokenBurst' | 'gateway.rateLimit.perIpBurst';
  readonly policy: string;
  readonly what: string;
}

const PER_TOKEN: Limit = {
  running: (s) => s.steps.authenticate.tokenLimits,
  rate: 'gateway.rateLimit.perTokenPerSecond',
  burst: 'gateway.rateLimit.perTokenBurst',
  policy: 'per-token',
  what: 'token subject',
};
const PER_IP: Limit = {
  running: (s) => s.edge.ipLimits,
  rate: 'gateway.rateLimit.perIpPerSecond',
  burst: 'gateway.rateLimit.perIpBurst',
  policy: 'per-address',
  what: 'client address',
};

function sameValues(a: Config, b: Config, keys: readonly ConfigKey[]): boolean {
  return keys.every((key) => a[key] === b[key]);
}

/** The running configuration and the request path's settings built from it. */
interface Running {
  readonly config: Config;
  readonly settings: PipelineSettings;
}

/** A limit whose rate and burst did not change keeps its buckets, so a reload hands no client a fresh burst. */
function buckets(limit: Limit, next: Config, shared: SharedDeps, running: Running | undefined): TokenBuckets {
  if (running !== undefined && sameValues(running.config, next, [limit.rate, limit.burst])) return limit.running(running.settings);
  return new TokenBuckets(next[limit.rate], next[limit.burst], limit.policy, limit.what, shared.now);
}

function settingsFor(next: Config, shared: SharedDeps, running?: Running): PipelineSettings {
  const clients = new ClientAddress(next['http.trustedProxies']);
  const targetRules = { maxBytes: next['http.maxTargetBytes'], credentialNames: shared.credentialNames };
  return {
    edge: {
      ...shared.edge,
      targetRules,
      targets: new TargetMemo(shared.routesOf(next), targetRules),
      clients,
      ipLimits: buckets(PER_IP, next, shared, running),
    },
    steps: {
      authenticate: { ...shared.authenticate, tokenLimits: buckets(PER_TOKEN, next, shared, running) },
      cached: { ...shared.cached, clients },
      forward: { ...shared.forward, clients },
    },
    log: shared.log,
  };
}

/** The request path's settings, read through one reference that a reload swaps. */
export function livePipeline(live: LiveConfig, shared: SharedDeps): () => PipelineSettings {
  let settings = settingsFor(live.current, shared);
  live.add({
    prepare(next) {
      const built = settingsFor(next, shared, { config: live.current, settings });
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

/**
 * Refuses a reload when the TLS files the loaded configuration names, as they are on disk now,
 * would not make an identity: the next start would fail on them (with these words), so
 * `catalog_gateway_config_last_reload_successful` says so now, not at the restart.
 */
export function liveTlsFiles(live: LiveConfig, now: () => number): void {
  live.add({
    prepare(_next, loaded) {
      const paths = tlsPaths(loaded);
      if (paths !== undefined) {
        try {
          readTlsIdentity(paths, now());
        } catch (err) {
          throw new Error(`config keys http.tls.*: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }
      }
      return () => undefined;
    },
  });
}
