/**
 * The catalog origin: opens (seeding first if missing) the catalog, listens on the API and admin
 * ports, and shuts down in order. `stop()` marks the origin as draining (new requests on open
 * connections get 503, `/readyz` says not ready), drains the API listener, then the admin
 * listener — so probes see "not ready" for as long as the API drains — and closes the database
 * once no request can touch it.
 */
import { existsSync } from 'node:fs';
import type { DestinationStream } from 'pino';
import { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAdminServer } from '../shared/admin-server.ts';
import { parseCredentialNames } from '../shared/credentials.ts';
import { createHttpServer, httpLimits, reportRefusals } from '../shared/http-server.ts';
import { baseUrl, drain, listen } from '../shared/lifecycle.ts';
import { createAccessLog } from '../shared/access-log.ts';
import { ClientAddress } from '../shared/client-address.ts';
import { createLogger } from '../shared/logger.ts';
import { createVerifier } from '../shared/signing-key.ts';
import { CatalogDb } from './catalog-db.ts';
import { CirculationDb } from './circulation-db.ts';
import { EventDelivery } from './event-delivery.ts';
import { createOriginHandler } from './handler.ts';
import { originCompression } from './deliver.ts';
import { OriginMetrics } from './metrics.ts';
import { RateLimiter } from './rate-limit.ts';
import { catalogPath, seedCatalog } from './seed.ts';

export interface OriginDeps {
  readonly logDestination?: DestinationStream;
  readonly registry?: Registry;
  /** Milliseconds since the epoch, for token expiry and rate-limit windows; defaults to `Date.now`. */
  readonly now?: () => number;
}

export interface RunningOrigin {
  readonly url: string;
  readonly adminUrl: string;
  readonly registry: Registry;
  stop(): Promise<void>;
}

/** Seeds config['origin.db'] (or <dataDir>/catalog.db) with config['origin.books'] books first if the file is missing. */
/**
 * `public` because requests carry Authorization (RFC 9111 §3.5); the stale windows (RFC 5861) let
 * caches in front ride out origin restarts and refresh in the background when an operator sets them.
 */
function cacheDirectives(config: Config, maxAgeSeconds: number): string {
  let value = `public, max-age=${maxAgeSeconds}`;
  if (config['origin.staleWhileRevalidateSeconds'] > 0) value += `, stale-while-revalidate=${config['origin.staleWhileRevalidateSeconds']}`;
  if (config['origin.staleIfErrorSeconds'] > 0) value += `, stale-if-error=${config['origin.staleIfErrorSeconds']}`;
  return value;
}

/**
 * The caching fields of every cacheable answer: `Cache-Control` for every cache, and with
 * `origin.cdnMaxAgeSeconds` a `CDN-Cache-Control` (RFC 9213) that the gateway obeys instead, so it
 * keeps answers long (events purge them) while browsers, which nothing purges, keep them briefly.
 */
export function cachingFields(config: Config): Readonly<Record<string, string>> {
  const fields: Record<string, string> = { 'cache-control': cacheDirectives(config, config['origin.maxAgeSeconds']) };
  const cdnMaxAge = config['origin.cdnMaxAgeSeconds'];
  // The stale windows are repeated: a cache that obeys the targeted field ignores Cache-Control.
  if (cdnMaxAge > 0) fields['cdn-cache-control'] = cacheDirectives(config, cdnMaxAge);
  return fields;
}

export async function startOrigin(config: Config, deps: OriginDeps = {}): Promise<RunningOrigin> {
  const path = catalogPath(config);
  const logger = createLogger(config, 'catalog-origin', deps.logDestination);
  if (!existsSync(path)) {
    const started = performance.now();
    seedCatalog(path, config['origin.books']);
    logger.info({ path, books: config['origin.books'], seconds: Math.round(performance.now() - started) / 1000 }, 'seeded the catalog');
  }
  const now = deps.now ?? Date.now;
  const registry = deps.registry ?? new Registry();
  // The writer first: it turns the file to WAL, which the read-only search connection then shares.
  const circulation = new CirculationDb(path, now, config['origin.events.logSize']);
  const db = new CatalogDb(path);
  const books = db.bookCount();
  if (books !== config['origin.books']) {
    // origin.books only says how many to seed; an existing catalog is served as it is.
    logger.warn(
      { path, books, configured: config['origin.books'] },
      `the catalog holds ${books} books; origin.books applies only when seeding (rebuild with: catalog-gateway seed --books ${config['origin.books']} --db ${path})`,
    );
  }
  const metrics = new OriginMetrics(registry, () => circulation.outboxDepth);
  const events = new EventDelivery(circulation, metrics, logger, {
    retryForMs: config['origin.events.retryForSeconds'] * 1000,
    disableAfterMs: config['origin.events.disableAfterSeconds'] * 1000,
    attemptTimeoutMs: config['origin.events.attemptTimeoutMs'],
    now,
  });
  let draining = false;
  const credentialNames = parseCredentialNames(config['http.credentialParameters']);
  const limits = httpLimits(config);
  const onRefused = reportRefusals(logger, credentialNames, (reason) => {
    metrics.refused(reason);
  });
  const api = createHttpServer(
    createOriginHandler({
      db,
      circulation,
      committed: () => {
        events.wake();
      },
      verifier: createVerifier(config, now),
      limiter: new RateLimiter(config['origin.rateLimitPerMinute'], now),
      metrics,
      logger,
      accessLog: createAccessLog(logger, { enabled: true, format: config['log.format'], service: 'catalog-origin' }),
      maxTargetBytes: config['http.maxTargetBytes'],
      credentialNames,
      clients: new ClientAddress(config['http.trustedProxies']),
      cachingFields: cachingFields(config),
      compression: originCompression(config),
      isDraining: () => draining,
    }),
    limits,
    onRefused,
  );
  const admin = createAdminServer({
    registry,
    limits,
    onRefused,
    notReadyReason: () => (draining ? 'the origin is shutting down' : undefined),
  });
  const timeoutMs = config['http.shutdownTimeoutMs'];
  const close = async (): Promise<void> => {
    draining = true;
    const deadline = performance.now() + timeoutMs;
    await drain(api, timeoutMs);
    await drain(admin, Math.max(0, deadline - performance.now()));
    events.stop();
    db.close();
    circulation.close();
  };
  try {
    const apiAddress = await listen(api, config['origin.host'], config['origin.port']);
    const adminAddress = await listen(admin, config['origin.host'], config['origin.adminPort']);
    let stopping: Promise<void> | undefined;
    const url = baseUrl(apiAddress);
    const adminUrl = baseUrl(adminAddress);
    logger.info({ url, adminUrl }, 'listening');
    // Events a previous run committed and did not deliver go out now.
    events.wake();
    return {
      url,
      adminUrl,
      registry,
      stop: () => (stopping ??= close()),
    };
  } catch (err) {
    await close();
    throw err;
  }
}
