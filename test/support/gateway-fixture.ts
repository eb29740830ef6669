/**
 * A real gateway for tests, with a hand-driven clock, its log lines captured from an injected
 * destination, and tokens minted with its own secret.
 */
import type { Dispatcher } from 'undici';
import type { Config, ConfigKey } from '../../src/config/schema.ts';
import { startGateway, type RunningGateway } from '../../src/gateway/gateway.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../src/shared/signing-key.ts';
import { after, before } from 'node:test';
import { startOrigin, type RunningOrigin } from '../../src/origin/origin.ts';
import { tempDir, testConfig } from './config.ts';
import { HEALTH_PATH } from './health-check.ts';
import { dispatcherFor } from './protocols.ts';
import { OK, startFaultOrigin, type Behaviour, type FaultOrigin } from './fault-origin.ts';
import { captureLogs, get, manualClock, metricValue, until, type Clock, type LogCapture, type Reply } from './harness.ts';

export interface GatewayFixture {
  readonly gateway: RunningGateway;
  readonly config: Config;
  readonly clock: Clock;
  readonly logs: LogCapture;
  /** What speaks the API listener's protocol (test/support/protocols.ts); undefined for undici's default HTTP/1.1. */
  readonly dispatcher: Dispatcher | undefined;
  /** A valid development token for this gateway (scope `catalog:read` unless given). */
  token(scope?: string): Promise<string>;
  /** GET (or another method) through the gateway with a valid token unless headers say otherwise. */
  get(target: string, headers?: Record<string, string>, method?: string): Promise<Reply>;
  /** The gateway's `/metrics` text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** An origin to stand in front of: a catalog origin (probed on its admin `/readyz`) or a test double's URL. */
export type FixtureOrigin = string | { readonly url: string; readonly adminUrl: string };

export async function startGatewayFixture(origin: FixtureOrigin, overrides: Partial<Record<ConfigKey, unknown>> = {}): Promise<GatewayFixture> {
  const [url, probe] = typeof origin === 'string' ? [origin, HEALTH_PATH] : [origin.url, `${origin.adminUrl}/readyz`];
  const config = testConfig({
    'gateway.origin': url,
    'gateway.upstream.probe': probe,
    'gateway.upstream.probeIntervalMs': 200,
    'log.level': 'info',
    ...overrides,
  });
  const clock = manualClock();
  const logs = captureLogs();
  const gateway = await startGateway(config, { logDestination: logs, now: () => clock.now() });
  const secret = loadOrCreateSecret(secretPath(config));
  const token = (scope = 'catalog:read'): Promise<string> => mintToken(secret, { subject: 'tester', scope, ttlSeconds: 3600 });
  const valid = await token();
  // The API listener's protocol follows the overrides (HTTP/2 over TLS, h2c); the admin listener is always HTTP/1.1.
  const dispatcher = dispatcherFor(config);
  let stopped: Promise<void> | undefined;
  return {
    gateway,
    config,
    clock,
    logs,
    dispatcher,
    token,
    get: (target, headers = {}, method = 'GET') =>
      get(`${gateway.url}${target}`, { authorization: `Bearer ${valid}`, ...headers }, method, undefined, dispatcher),
    metrics: async () => (await get(`${gateway.adminUrl}/metrics`)).body,
    stop: () => {
      // The gateway first: a client's close waits for its requests, which a drain lets finish.
      stopped ??= gateway.stop().then(() => dispatcher?.close());
      return stopped;
    },
  };
}

export interface FaultGateway {
  readonly origin: FaultOrigin;
  readonly fx: GatewayFixture;
  /** How the origin answers a target; targets not in the map get OK. */
  readonly behaviours: Map<string, Behaviour>;
}

/**
 * `size` gateways in front of `origin` sharing one cache through the Redis at `redisUrl`, under a
 * key prefix of their own; returned once every one of them shares.
 */
export async function startSharingGateways(
  origin: FixtureOrigin,
  redisUrl: string,
  size: number,
  overrides: Partial<Record<ConfigKey, unknown>> = {},
): Promise<GatewayFixture[]> {
  const shared = { ...overrides, 'gateway.redis.url': redisUrl, 'gateway.redis.keyPrefix': `test-${Math.random().toString(36).slice(2)}:` };
  const fleet: GatewayFixture[] = [];
  for (let i = 0; i < size; i++) fleet.push(await startGatewayFixture(origin, shared));
  await until(async () => (await Promise.all(fleet.map(async (fx) => metricValue(await fx.metrics(), 'catalog_gateway_shared_tier_up') === 1))).every(Boolean));
  return fleet;
}

/**
 * Registers the calling suite's before/after hooks: a fault origin and a gateway in front of it.
 * The fields are filled in by the `before` hook, so read them inside tests only.
 */
export function useFaultGateway(overrides: Partial<Record<ConfigKey, unknown>> = {}): FaultGateway {
  const behaviours = new Map<string, Behaviour>();
  const setup: { origin?: FaultOrigin; fx?: GatewayFixture } = {};
  before(async () => {
    setup.origin = await startFaultOrigin();
    setup.origin.behave((target) => behaviours.get(target) ?? OK);
    setup.fx = await startGatewayFixture(setup.origin.url, overrides);
  });
  after(async () => {
    await setup.fx?.stop();
    await setup.origin?.close();
  });
  return startedFields('useFaultGateway', setup, { behaviours });
}

/** Getters for what a suite's before hook starts, which fail loudly when read before it ran. */
function startedFields<O, E extends object = object>(
  helper: string,
  setup: { origin?: O; fx?: GatewayFixture },
  extra?: E,
): { readonly origin: O; readonly fx: GatewayFixture } & E {
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`${helper}: read its fields inside a test, after the before hook`);
    return value;
  };
  return {
    get origin() {
      return started(setup.origin);
    },
    get fx() {
      return started(setup.fx);
    },
    ...(extra as E),
  };
}

export interface RealOriginGateway {
  readonly origin: RunningOrigin;
  readonly fx: GatewayFixture;
}

/**
 * Registers the calling suite's before/after hooks: the real origin on a 2,000-book catalog and a
 * gateway in front of it, sharing one data directory (so one signing secret). Read the fields
 * inside tests only.
 */
export function useRealOriginGateway(): RealOriginGateway {
  const setup: { origin?: RunningOrigin; fx?: GatewayFixture } = {};
  before(async () => {
    const dataDir = tempDir();
    setup.origin = await startOrigin(testConfig({ dataDir, 'origin.books': 2000 }));
    setup.fx = await startGatewayFixture(setup.origin, { dataDir, 'origin.books': 2000 });
  });
  after(async () => {
    await setup.fx?.stop();
    await setup.origin?.stop();
  });
  return startedFields('useRealOriginGateway', setup);
}
