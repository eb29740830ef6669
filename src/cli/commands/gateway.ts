import { loadConfig } from '../../config/load.ts';
import { startGateway } from '../../gateway/gateway.ts';
import { onShutdownSignal } from '../../shared/lifecycle.ts';
import type { Command } from '../command.ts';

export const gateway: Command = {
  name: 'gateway',
  summary: 'Serve the catalog API through the caching gateway in front of an origin.',
  flags: [
    { name: 'origin', key: 'gateway.origin', value: 'URL', description: 'base URL of the catalog origin' },
    { name: 'origin-probe', key: 'gateway.upstream.probe', value: 'URL', description: "the origin's health check (absolute, or a path on --origin)" },
    { name: 'host', key: 'gateway.host', value: 'ADDRESS', description: 'address to listen on' },
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'API port (0 picks a free one)' },
    { name: 'admin-port', key: 'gateway.adminPort', value: 'PORT', description: 'admin port for /metrics, /healthz, /readyz' },
  ],
  async run(args) {
    const config = loadConfig(args.config);
    const running = await startGateway(config);
    onShutdownSignal(() => running.stop());
  },
};
