import cluster from 'node:cluster';
import { loadConfig } from '../../config/load.ts';
import { startGateway, startWorker } from '../../gateway/gateway.ts';
import { listenFailure } from '../../gateway/workers/messages.ts';
import { startPrimary, workerCount, workerGroup } from '../../gateway/workers/primary.ts';
import { onReloadSignal, onRestartSignal, onShutdownSignal } from '../../shared/lifecycle.ts';
import type { Command } from '../command.ts';
import { writePidFile } from '../pid-file.ts';
import { commandConfig } from '../state.ts';

/**
 * A worker that cannot start tells its primary why when it is a port it could not have (the
 * primary reports that once for all and stops them), and lets go of the channel either way, which
 * would otherwise keep it running after its error is printed.
 */
async function failedWorker(err: unknown): Promise<never> {
  const failure = listenFailure(err);
  if (failure !== undefined) {
    await new Promise<void>((resolve) =>
      process.send?.(failure, undefined, {}, () => {
        resolve();
      }),
    );
    process.exit(1);
  }
  process.disconnect();
  throw err;
}

export const gateway: Command = {
  name: 'gateway',
  summary: 'Serve the catalog API through the caching gateway in front of an origin.',
  listeners: ['gateway.port', 'gateway.adminPort'],
  flags: [
    { name: 'origin', key: 'gateway.origin', value: 'URL', description: 'base URL of the catalog origin' },
    { name: 'origin-probe', key: 'gateway.upstream.probe', value: 'URL', description: "the origin's health check (absolute, or a path on --origin)" },
    { name: 'host', key: 'gateway.host', value: 'ADDRESS', description: 'address to listen on' },
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'API port (0 picks a free one)' },
    { name: 'admin-port', key: 'gateway.adminPort', value: 'PORT', description: 'admin port for /metrics, /healthz, /readyz' },
    { name: 'workers', key: 'gateway.workers', value: 'N|auto', description: 'processes serving the API port (auto: one per core)' },
    { name: 'disk-path', key: 'gateway.cache.disk.path', value: 'DIR', description: "the disk tier's directory (default: the data directory's cache/)" },
    { name: 'redis', key: 'gateway.redis.url', value: 'URL', description: 'share the cache through Redis (redis://, redis+cluster://, redis+sentinel://)' },
  ],
  async run(args) {
    const config = commandConfig('gateway', args.config);
    // node:cluster starts each worker as this same command; the primary decides how many.
    if (cluster.isWorker) {
      const worker = await startWorker(config, workerGroup(process.ppid)).catch((err: unknown) => failedWorker(err));
      onShutdownSignal(() => worker.stop());
      return;
    }
    const workers = workerCount(config['gateway.workers']);
    const primary = workers > 1 ? await startPrimary(config, workers) : undefined;
    const running = primary ?? (await startGateway(config));
    const removePidFile = writePidFile(config);
    onShutdownSignal(async () => {
      await running.stop();
      removePidFile();
    });
    // The primary loads and validates, then hands the result to its workers.
    onReloadSignal(() => {
      running.reload(() => loadConfig(args.config));
    });
    onRestartSignal(primary && (() => void primary.roll()));
  },
};
