/**
 * The gateway's admin listener: `/metrics`, `/healthz`, `/readyz`, `POST /purge`, and `POST
 * /events` with the registration that has the origin send them. One per gateway: the gateway
 * process itself, or the primary of its workers, which takes purges and events for all of them.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { createAdminServer } from '../shared/admin-server.ts';
import type { TokenVerifier } from '../shared/auth.ts';
import type { Refusal, HttpLimits } from '../shared/http-server.ts';
import { baseUrl, drain, listen } from '../shared/lifecycle.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../shared/signing-key.ts';
import { EventMetrics } from './events/event-metrics.ts';
import { EventReceiver } from './events/event-receiver.ts';
import { EventRegistration } from './events/registration.ts';
import { purgeEndpoint, PURGE_SCOPE } from './purge/purge-endpoint.ts';
import type { PurgeTaker } from './purge/purger.ts';
import type { CacheKey } from './store/memory/response-cache.ts';

export interface AdminParts {
  readonly config: Config;
  readonly logger: Logger;
  /** What `/metrics` shows; event metrics are registered on it. */
  readonly registry: Registry;
  readonly verifier: TokenVerifier;
  readonly purger: PurgeTaker;
  /** The cache key a purge URL names, per the route table. */
  readonly keyOf: (url: string) => CacheKey | undefined;
  readonly notReadyReason: () => string | undefined;
  readonly degradedReason: () => string | undefined;
  readonly limits: HttpLimits;
  readonly onRefused: (refusal: Refusal) => void;
  readonly now: () => number;
}

export interface RunningAdmin {
  readonly url: string;
  /** Stops renewing the event registration and closes the listener, letting requests finish. */
  stop(): Promise<void>;
}

/** The token the gateway registers with: configured, or minted with the development HMAC secret. */
export function registrationToken(config: Config): () => Promise<string> {
  const configured = config['gateway.events.token'];
  if (configured !== null) return () => Promise.resolve(configured);
  if (config['auth.jwks'] !== null)
    throw new Error('gateway.events.register needs gateway.events.token when auth.jwks is set (the gateway cannot mint tokens for a JWKS)');
  const secret = loadOrCreateSecret(secretPath(config));
  return () =>
    mintToken(secret, { subject: 'catalog-gateway', scope: PURGE_SCOPE, ttlSeconds: 300, issuer: config['auth.issuer'], audience: config['auth.audience'] });
}

export async function startAdmin(parts: AdminParts): Promise<RunningAdmin> {
  const { config, logger } = parts;
  const registrationTokens = config['gateway.events.register'] ? registrationToken(config) : undefined;
  let registration: EventRegistration | undefined;
  const receiver = new EventReceiver(
    { secret: () => registration?.secret ?? config['gateway.events.secret'] ?? undefined, soft: config['gateway.events.softPurge'], now: parts.now },
    parts.purger,
    new EventMetrics(parts.registry),
    logger,
  );
  const server = createAdminServer({
    registry: parts.registry,
    limits: parts.limits,
    onRefused: parts.onRefused,
    notReadyReason: parts.notReadyReason,
    degradedReason: parts.degradedReason,
    endpoints: {
      '/purge': purgeEndpoint(parts.verifier, parts.purger, parts.keyOf),
      '/events': receiver.handle,
    },
  });
  const stop = async (): Promise<void> => {
    await registration?.stop();
    await drain(server, config['http.shutdownTimeoutMs']);
  };
  const url = baseUrl(await listen(server, config['gateway.host'], config['gateway.adminPort']));
  if (registrationTokens !== undefined) {
    registration = new EventRegistration({
      origin: config['gateway.origin'].replace(/\/$/, ''),
      receiver: config['gateway.events.receiverUrl'] ?? `${url}/events`,
      token: registrationTokens,
      file: join(config.dataDir, 'gateway-events.json'),
      // A registration shared under a public receiver URL stays for the replicas left.
      removeOnStop: config['gateway.events.unregisterOnStop'] && config['gateway.events.receiverUrl'] === null,
      logger,
    });
    try {
      await registration.start();
    } catch (err) {
      await stop();
      throw err;
    }
  }
  return { url, stop };
}
