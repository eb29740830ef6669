/**
 * The composition root's first half: what every gateway process makes from a configuration,
 * whatever its role (a gateway alone, one of a primary's workers, or the primary answering the
 * admin port for them): the logger, the live configuration and its reload gauges, the token
 * verifier, the origin's health probe, and the route table a purge by URL is named by. The
 * single process (gateway.ts) and the primary (workers/primary.ts) both start here, so neither
 * wires these twice.
 */
import type { DestinationStream, Logger } from 'pino';
import { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import type { TokenVerifier } from '../shared/auth.ts';
import { parseCredentialNames, type CredentialNames } from '../shared/credentials.ts';
import { httpLimits, reportRefusals, type Refusal } from '../shared/http-server.ts';
import { createLogger } from '../shared/logger.ts';
import { reportNodeHttpInternals } from '../shared/node-http-internals.ts';
import { createVerifier } from '../shared/signing-key.ts';
import { startAdmin, type RunningAdmin } from './admin.ts';
import { cacheKeyOf } from './routes/cache-keys.ts';
import type { PurgeTaker } from './purge/purger.ts';
import { LiveConfig } from './reload/live-config.ts';
import { liveLogLevel, liveTlsFiles } from './reload/live-parts.ts';
import { RouteTable } from './routes/route-table.ts';
import type { CacheKey } from './store/memory/response-cache.ts';
import { OriginHealth } from './upstream/origin-health.ts';
import { wallClock } from '../shared/turn-clock.ts';

export interface GatewayDeps {
  /** Where log lines go; default per `log.destination`. */
  readonly logDestination?: DestinationStream;
  /** Default: a new Registry for this gateway. */
  readonly registry?: Registry;
  /** Milliseconds since the epoch, for cache freshness and token expiry. Default: the turn's clock (../shared/turn-clock.ts). */
  readonly now?: () => number;
}

export interface ProcessParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly now: () => number;
  readonly live: LiveConfig;
  readonly verifier: TokenVerifier;
  readonly health: OriginHealth;
  /** `http.credentialParameters`, parsed. */
  readonly credentialNames: CredentialNames;
  /** The route table of a configuration: one per configuration, whoever asks (a purge by URL, the request path). */
  readonly routesOf: (config: Config) => RouteTable;
  /** The cache key a purge by URL names, by the route table now in force. */
  readonly keyOf: (url: string) => CacheKey | undefined;
}

export function processParts(config: Config, deps: GatewayDeps): ProcessParts {
  const logger = createLogger(config, 'catalog-gateway', deps.logDestination);
  reportNodeHttpInternals(logger);
  const live = new LiveConfig(config, logger);
  liveLogLevel(live, logger);
  // Keyed by the configuration object, which a reload replaces whole: the old table goes with it.
  const tables = new WeakMap<Config, RouteTable>();
  const routesOf = (c: Config): RouteTable => {
    let table = tables.get(c);
    if (table === undefined) {
      table = new RouteTable(c['gateway.routes'], c['auth.requiredScope'], c['gateway.cache.targetedFields']);
      tables.set(c, table);
    }
    return table;
  };
  const now = deps.now ?? wallClock;
  liveTlsFiles(live, now);
  return {
    config,
    logger,
    registry: deps.registry ?? new Registry(),
    now,
    live,
    verifier: createVerifier(config, now),
    health: new OriginHealth(config),
    credentialNames: parseCredentialNames(config['http.credentialParameters']),
    routesOf,
    keyOf: (url) => cacheKeyOf(routesOf(live.current), url, live.current['http.maxTargetBytes']),
  };
}

/** What the process answering the admin port adds: who takes its purges, and its readiness. */
export interface AdminRole {
  readonly purger: PurgeTaker;
  readonly notReadyReason: () => string | undefined;
  readonly degradedReason: () => string | undefined;
  /** Counts a request the admin listener refused before parsing completed (it is logged either way). */
  readonly countRefusal: (reason: string) => void;
}

/** Opens the admin listener of a gateway alone or of a primary; its reload gauges go with it. */
export function openAdmin(parts: ProcessParts, role: AdminRole): Promise<RunningAdmin> {
  parts.live.registerGauges(parts.registry);
  return startAdmin({
    ...parts,
    ...role,
    limits: httpLimits(parts.config),
    onRefused: refusals(parts, role.countRefusal),
  });
}

/** Logs a request a listener refused before parsing completed (a redacted excerpt) and counts it. */
export function refusals(parts: ProcessParts, count: (reason: string) => void): (refusal: Refusal) => void {
  return reportRefusals(parts.logger, parts.credentialNames, count);
}
