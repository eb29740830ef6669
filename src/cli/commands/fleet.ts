import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type FlagValue } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { startPrimary, workerCount } from '../../gateway/workers/primary.ts';
import { diskPath } from '../../gateway/store/disk/disk-store.ts';
import { startOrigin } from '../../origin/origin.ts';
import { onReloadSignal, onRestartSignal, onShutdownSignal } from '../../shared/lifecycle.ts';
import { secretPath } from '../../shared/signing-key.ts';
import type { Command, ListenerKey } from '../command.ts';
import { commandConfig } from '../state.ts';
import { startRedisProcess } from '../redis-server.ts';
import { example, exampleToken } from './start.ts';

const LISTENERS: readonly ListenerKey[] = ['gateway.port', 'gateway.adminPort', 'origin.port', 'origin.adminPort'];

/**
 * The listeners' ports left at their defaults, which are `npm start`'s: the fleet takes free ones
 * instead (its banner prints them), so that it runs beside `npm start`. A port named by a flag,
 * the environment or a file stays as named.
 */
function freePortsByDefault(config: Config, flags: readonly FlagValue[]): Partial<Record<ListenerKey, number>> {
  const defaults = loadConfig({ env: {} });
  const free: Partial<Record<ListenerKey, number>> = {};
  for (const key of LISTENERS) if (config[key] === defaults[key] && !flags.some((f) => f.key === key)) free[key] = 0;
  return free;
}

/** A fleet is at least two processes, whatever `gateway.workers` says. */
const MIN_WORKERS = 2;

export const fleet: Command = {
  name: 'fleet',
  summary: 'Run a local fleet: Redis, the catalog origin, and gateway workers sharing one cache through Redis.',
  listeners: LISTENERS,
  flags: [
    { name: 'workers', key: 'gateway.workers', value: 'N|auto', description: `gateway processes (at least ${MIN_WORKERS}; auto: one per core)` },
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'gateway API port (default: a free one)' },
    { name: 'admin-port', key: 'gateway.adminPort', value: 'PORT', description: 'gateway admin port (default: a free one)' },
    { name: 'origin-port', key: 'origin.port', value: 'PORT', description: 'origin API port (default: a free one)' },
    { name: 'origin-admin-port', key: 'origin.adminPort', value: 'PORT', description: 'origin admin port (default: a free one)' },
  ],
  dataDir:
    "catalog, Redis files and event registration (default: a temporary directory of its own, removed when the fleet stops; the signing secret stays the package's data/)",
  async run(args) {
    if (!cluster.isPrimary) throw new Error('the fleet command runs in the primary only; its workers run `gateway`');
    const shared = commandConfig('fleet', args.config);
    // Its catalog, Redis and event registration go in a directory of its own, removed when it
    // stops, so that it never rewrites the registration of a gateway started with `start`; the
    // signing secret stays the shared one, so `catalog-gateway token` mints tokens it accepts.
    // `--data-dir` keeps everything in the directory named.
    const explicit = args.config.flags?.some((f) => f.key === 'dataDir') === true;
    const own = explicit ? undefined : mkdtempSync(join(tmpdir(), 'catalog-fleet-'));
    const removeOwn = (): void => {
      if (own !== undefined) rmSync(own, { recursive: true, force: true });
    };
    const stateOverrides = {
      ...freePortsByDefault(shared, args.config.flags ?? []),
      ...(own === undefined ? {} : { dataDir: own, 'auth.secretFile': secretPath(shared) }),
    };
    const config = loadConfig({ ...args.config, overrides: stateOverrides });
    const redis = await startRedisProcess({ dir: join(config.dataDir, 'redis') });
    const origin = await startOrigin(config).catch(async (err: unknown) => {
      await redis.kill();
      removeOwn();
      throw err;
    });
    const probe = `${origin.adminUrl}/readyz`;
    const overrides = {
      ...stateOverrides,
      'gateway.origin': origin.url,
      'gateway.upstream.probe': probe,
      'gateway.redis.url': redis.url,
      'gateway.events.register': true,
      'gateway.events.unregisterOnStop': true,
    };
    const gatewayConfig = loadConfig({ ...args.config, overrides });
    const count = Math.max(MIN_WORKERS, workerCount(gatewayConfig['gateway.workers']));
    // The workers run the `gateway` command, told where this fleet's origin, Redis and disk tier
    // are; they only read the secret, which the shared data directory (or the one named) holds.
    const workerArgs = [
      'gateway',
      ...(args.config.file === undefined ? [] : ['--config', args.config.file]),
      ...(explicit ? ['--data-dir', config.dataDir] : []),
      '--port',
      String(gatewayConfig['gateway.port']),
      '--origin',
      origin.url,
      '--origin-probe',
      probe,
      '--redis',
      redis.url,
      '--disk-path',
      diskPath(gatewayConfig),
    ];
    const primary = await startPrimary(gatewayConfig, count, workerArgs).catch(async (err: unknown) => {
      await origin.stop();
      await redis.kill();
      removeOwn();
      throw err;
    });
    onShutdownSignal(async () => {
      await primary.stop();
      await origin.stop();
      await redis.kill();
      removeOwn();
    });
    onReloadSignal(() => {
      primary.reload(() => loadConfig({ ...args.config, overrides }));
    });
    onRestartSignal(() => void primary.roll());
    const { url } = primary;
    const token = await exampleToken(config, config['auth.requiredScope']);
    const q = token === undefined ? 'dune' : (await example(origin.url, token)).q;
    process.stdout.write(
      [
        '',
        `A local fleet is running: ${count} gateway workers sharing one cache through Redis, in front of the catalog origin.`,
        `  gateway  ${url}   admin ${primary.adminUrl}/metrics  /readyz  (all workers)`,
        `  redis    ${redis.url}`,
        `  origin   ${origin.url}   admin ${origin.adminUrl}/metrics`,
        `  data     ${config.dataDir}${own === undefined ? '' : ' (its own, removed when the fleet stops)'}`,
        '',
        'Ask it a few times: each worker in turn answers, and only the first asks the origin',
        '(`catalog_gateway_fleet_fills_total` and `catalog_origin_http_requests_total` say so):',
        `curl -i -H 'Authorization: Bearer ${token ?? '$TOKEN'}' '${url}/v1/books?q=${q}'`,
        '',
        'Ctrl-C stops the workers, the origin and Redis.',
        '',
      ].join('\n'),
    );
  },
};
