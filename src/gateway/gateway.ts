/**
 * Builds one gateway: everything expensive (key material, the origin pool, the cache, loggers,
 * metric objects) is made here once; the request path only reads it. The clock, the log
 * destination and the metrics registry are injectable so tests drive freshness without sleeping
 * and run several gateways in one process.
 */
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAccessLog } from '../shared/access-log.ts';
import { createAdminServer } from '../shared/admin-server.ts';
import { ClientAddress } from '../shared/client-address.ts';
import { parseCredentialNames } from '../shared/credentials.ts';
import { createHttpServer, httpLimits, reportRefusals } from '../shared/http-server.ts';
import { baseUrl, drain, listen } from '../shared/lifecycle.ts';
import { createLogger } from '../shared/logger.ts';
import { createVerifier, loadOrCreateSecret, mintToken, secretPath } from '../shared/signing-key.ts';
import { createFleet } from './fleet/fleet.ts';
import { EventReceiver } from './events/event-receiver.ts';
import { EventRegistration } from './events/registration.ts';
import { Coalescer } from './fill/coalescer.ts';
import { Filler, hiddenFields, type FillOutcome } from './fill/fill.ts';
import { GatewayMetrics, type CacheGauges } from './metrics.ts';
import { cacheKeyOf, createPipeline } from './pipeline.ts';
import { purgeEndpoint, PURGE_SCOPE } from './purge/purge-endpoint.ts';
import { Purger } from './purge/purger.ts';
import { RouteTable } from './routes/route-table.ts';
import { TokenBuckets } from './steps/token-bucket.ts';
import { ResponseCache } from './store/response-cache.ts';
import { OriginClient } from './upstream/origin-client.ts';
import { OriginHealth } from './upstream/origin-health.ts';

export interface GatewayDeps {
  /** Where log lines go; default per `log.destination`. */
  readonly logDestination?: DestinationStream;
  /** Default: a new Registry for this gateway. */
  readonly registry?: Registry;
  /** Milliseconds since the epoch, for cache freshness and token expiry. Default: `Date.now`. */
  readonly now?: () => number;
}

export interface RunningGateway {
  readonly url: string;
  readonly adminUrl: string;
  readonly registry: Registry;
  /** Entries and bytes in the cache now. */
  cacheStats(): CacheGauges;
  /** Stops taking requests, lets in-flight ones finish within `http.shutdownTimeoutMs`, closes. */
  stop(): Promise<void>;
}

/** The token the gateway registers with: configured, or minted with the development HMAC secret. */
function registrationToken(config: Config): () => Promise<string> {
  const configured = config['gateway.events.token'];
  if (configured !== null) return () => Promise.resolve(configured);
  if (config['auth.jwks'] !== null) throw new Error('gateway.events.register needs gateway.events.token when auth.jwks is set (the gateway cannot mint tokens for a JWKS)');
  const secret = loadOrCreateSecret(secretPath(config));
  return () => mintToken(secret, { subject: 'catalog-gateway', scope: PURGE_SCOPE, ttlSeconds: 300, issuer: config['auth.issuer'], audience: config['auth.audience'] });
}

export async function startGateway(config: Config, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const now = deps.now ?? Date.now;
  const logger = createLogger(config, 'catalog-gateway', deps.logDestination);
  const registry = deps.registry ?? new Registry();
  const verifier = createVerifier(config, now);
  const cache: ResponseCache = new ResponseCache({
    maxBytes: config['gateway.cache.maxBytes'],
    maxEntryBytes: config['gateway.cache.maxEntryBytes'],
    onEvict: () => {
      metrics.evicted();
    },
  });
  const cacheStats = (): CacheGauges => ({ entries: cache.entries, bytes: cache.bytes });
  const unfinished = new Set<ServerResponse>();
  const health = new OriginHealth(new URL(config['gateway.upstream.probe'], config['gateway.origin']), config['gateway.upstream.probeIntervalMs']);
  const metrics = new GatewayMetrics(registry, { cache: cacheStats, inFlight: () => unfinished.size, originUp: () => health.up });
  const origin = new OriginClient(config, () => {
    health.nudge();
  });
  const coalescer = new Coalescer<FillOutcome>();
  const purger = new Purger(cache, coalescer, metrics, now);
  const redisUrl = config['gateway.redis.url'];
  const fleet =
    redisUrl === null
      ? undefined
      : createFleet(config, redisUrl, {
          registry,
          logger,
          now,
          cache,
          applyPurge: (selector, soft) => {
            purger.apply(selector, soft);
          },
        });
  if (fleet !== undefined) {
    purger.fanOutTo((selector, soft) => {
      fleet.publishPurge(selector, soft);
    });
  }
  const tags = { header: config['gateway.purge.tagHeader'].toLowerCase(), expose: config['gateway.purge.exposeTagHeader'] };
  const localFiller = new Filler(origin, cache, metrics, now, tags);
  const routes = new RouteTable(config['gateway.routes'], config['auth.requiredScope']);
  const maxTargetBytes = config['http.maxTargetBytes'];
  const credentialNames = parseCredentialNames(config['http.credentialParameters']);
  let draining = false;
  const limits = httpLimits(config);
  const onRefused = reportRefusals(logger, credentialNames, (reason) => {
    metrics.refused(reason);
  });
  const api = createHttpServer(
    createPipeline(
      {
        maxTargetBytes,
        credentialNames,
        clients: new ClientAddress(config['http.trustedProxies']),
        hiddenFields: hiddenFields(tags),
        tokenLimits: new TokenBuckets(config['gateway.rateLimit.perTokenPerSecond'], config['gateway.rateLimit.perTokenBurst'], 'per-token', 'token subject', now),
        ipLimits: new TokenBuckets(config['gateway.rateLimit.perIpPerSecond'], config['gateway.rateLimit.perIpBurst'], 'per-address', 'client address', now),
        isDraining: () => draining,
        unfinished,
        verifier,
        cache,
        coalescer,
        filler: fleet?.filler(localFiller) ?? localFiller,
        origin,
        metrics,
        accessLog: createAccessLog(logger, { enabled: config['gateway.accessLog'], format: config['log.format'], credentialNames, service: 'catalog-gateway' }),
        logger,
        now,
      },
      routes,
    ),
    limits,
    onRefused,
  );
  const registrationTokens = config['gateway.events.register'] ? registrationToken(config) : undefined;
  let registration: EventRegistration | undefined;
  const receiver = new EventReceiver(
    { secret: () => registration?.secret ?? config['gateway.events.secret'] ?? undefined, soft: config['gateway.events.softPurge'], now },
    purger,
    metrics,
    logger,
  );
  const admin = createAdminServer({
    registry,
    limits,
    onRefused,
    notReadyReason: () => (draining ? 'the gateway is shutting down' : health.reason),
    degradedReason: () => fleet?.downReason(),
    endpoints: {
      '/purge': purgeEndpoint(verifier, purger, (url) => cacheKeyOf(routes, url, maxTargetBytes)),
      '/events': receiver.handle,
    },
  });

  const shutdownMs = config['http.shutdownTimeoutMs'];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      draining = true;
      // Answers still to come close their connection, so keep-alive clients do not send another
      // request on a connection that is about to go (nginx does the same on a graceful stop).
      for (const res of unfinished) res.shouldKeepAlive = false;
      registration?.stop();
      await drain(api, shutdownMs);
      await Promise.all([origin.close(), health.close(), fleet?.stop()]);
      await drain(admin, shutdownMs);
      logger.info('stopped');
      logger.flush();
    })();
    return stopped;
  };

  try {
    const url = baseUrl(await listen(api, config['gateway.host'], config['gateway.port']));
    const adminUrl = baseUrl(await listen(admin, config['gateway.host'], config['gateway.adminPort']));
    await Promise.all([health.start(), fleet?.start()]);
    logger.info({ url, adminUrl, origin: config['gateway.origin'], originUp: health.up }, 'listening');
    if (!health.up) logger.warn({ reason: health.reason }, 'the origin is not up; /readyz answers 503 until it is');
    if (registrationTokens !== undefined) {
      registration = new EventRegistration({
        origin: config['gateway.origin'].replace(/\/$/, ''),
        receiver: config['gateway.events.receiverUrl'] ?? `${adminUrl}/events`,
        token: registrationTokens,
        file: join(config.dataDir, 'gateway-events.json'),
        logger,
      });
      await registration.start();
    }
    return { url, adminUrl, registry, cacheStats, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
