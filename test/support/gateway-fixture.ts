/**
 * A real gateway for tests, with a hand-driven clock, its log lines captured from an injected
 * destination, and tokens minted with its own secret.
 */
import type { Config, ConfigKey } from '../../src/config/schema.ts';
import { startGateway, type RunningGateway } from '../../src/gateway/gateway.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../src/shared/signing-key.ts';
import { testConfig } from './config.ts';
import { captureLogs, get, manualClock, type Clock, type LogCapture, type Reply } from './harness.ts';

export interface GatewayFixture {
  readonly gateway: RunningGateway;
  readonly config: Config;
  readonly clock: Clock;
  readonly logs: LogCapture;
  /** A valid development token for this gateway (scope `catalog:read` unless given). */
  token(scope?: string): Promise<string>;
  /** GET (or another method) through the gateway with a valid token unless headers say otherwise. */
  get(target: string, headers?: Record<string, string>, method?: string): Promise<Reply>;
  /** The gateway's `/metrics` text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startGatewayFixture(originUrl: string, overrides: Partial<Record<ConfigKey, unknown>> = {}): Promise<GatewayFixture> {
  const config = testConfig({ 'gateway.origin': originUrl, 'log.level': 'info', ...overrides });
  const clock = manualClock();
  const logs = captureLogs();
  const gateway = await startGateway(config, { logDestination: logs, now: () => clock.now() });
  const secret = loadOrCreateSecret(secretPath(config));
  const token = (scope = 'catalog:read'): Promise<string> => mintToken(secret, { subject: 'tester', scope, ttlSeconds: 3600 });
  const valid = await token();
  return {
    gateway,
    config,
    clock,
    logs,
    token,
    get: (target, headers = {}, method = 'GET') => get(`${gateway.url}${target}`, { authorization: `Bearer ${valid}`, ...headers }, method),
    metrics: async () => (await get(`${gateway.adminUrl}/metrics`)).body,
    stop: () => gateway.stop(),
  };
}
