import { startOrigin } from '../../origin/origin.ts';
import { onShutdownSignal } from '../../shared/lifecycle.ts';
import type { Command } from '../command.ts';
import { commandConfig } from '../state.ts';

export const origin: Command = {
  name: 'origin',
  summary: 'Serve the catalog API from the catalog database (seeded first if the file is missing).',
  listeners: ['origin.port', 'origin.adminPort'],
  flags: [
    { name: 'host', key: 'origin.host', value: 'ADDRESS', description: 'address to listen on' },
    { name: 'port', key: 'origin.port', value: 'PORT', description: 'API port (0 picks a free one)' },
    { name: 'admin-port', key: 'origin.adminPort', value: 'PORT', description: 'admin port for /metrics, /healthz, /readyz' },
    { name: 'db', key: 'origin.db', value: 'PATH', description: 'catalog database file (default <dataDir>/catalog.db)' },
    { name: 'max-age', key: 'origin.maxAgeSeconds', value: 'SECONDS', description: 'Cache-Control max-age of successful responses' },
  ],
  async run(args) {
    const config = commandConfig('origin', args.config);
    const running = await startOrigin(config);
    onShutdownSignal(() => running.stop());
  },
};
