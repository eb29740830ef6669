import cluster from 'node:cluster';
import { join } from 'node:path';
import { loadConfig } from '../../config/load.ts';
import { startPrimary, workerCount } from '../../gateway/workers/primary.ts';
import { startOrigin } from '../../origin/origin.ts';
import { onShutdownSignal } from '../../shared/lifecycle.ts';
import type { Command } from '../command.ts';
import { startRedisProcess } from '../redis-server.ts';
import { example, exampleToken } from './start.ts';

/** A fleet is at least two processes, whatever `gateway.workers` says. */
const MIN_WORKERS = 2;

export const fleet: Command = {
  name: 'fleet',
  summary: 'Run a local fleet: Redis, the catalog origin, and gateway workers sharing one cache through Redis.',
  flags: [
    { name: 'workers', key: 'gateway.workers', value: 'N|auto', description: `gateway processes (at least ${MIN_WORKERS}; auto: one per core)` },
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'gateway API port' },
    { name: 'admin-port', key: 'gateway.adminPort', value: 'PORT', description: 'gateway admin port' },
  ],
  async run(args) {
    if (!cluster.isPrimary) throw new Error('the fleet command runs in the primary only; its workers run `gateway`');
    const config = loadConfig(args.config);
    const redis = await startRedisProcess({ dir: join(config.dataDir, 'redis') });
    const origin = await startOrigin(config).catch(async (err: unknown) => {
      await redis.kill();
      throw err;
    });
    const probe = `${origin.adminUrl}/readyz`;
    const overrides = { 'gateway.origin': origin.url, 'gateway.upstream.probe': probe, 'gateway.redis.url': redis.url, 'gateway.events.register': true, 'gateway.events.unregisterOnStop': true };
    const gatewayConfig = loadConfig({ ...args.config, overrides });
    const count = Math.max(MIN_WORKERS, workerCount(gatewayConfig['gateway.workers']));
    // The workers run the `gateway` command, told where this fleet's origin and Redis are.
    const workerArgs = ['gateway', ...(args.config.file === undefined ? [] : ['--config', args.config.file]), '--port', String(gatewayConfig['gateway.port']), '--origin', origin.url, '--origin-probe', probe, '--redis', redis.url];
    const primary = await startPrimary(gatewayConfig, count, workerArgs).catch(async (err: unknown) => {
      await origin.stop();
      await redis.kill();
      throw err;
    });
    onShutdownSignal(async () => {
      await primary.stop();
      await origin.stop();
      await redis.kill();
    });
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
