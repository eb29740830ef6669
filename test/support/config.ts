/** Configs for tests: every port ephemeral, state in a fresh temp directory, logs silent. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import type { Config, ConfigKey } from '../../src/config/schema.ts';

export function tempDir(prefix = 'catalog-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function testConfig(overrides: Partial<Record<ConfigKey, unknown>> = {}): Config {
  return loadConfig({
    env: {},
    overrides: {
      dataDir: tempDir(),
      'log.level': 'silent',
      'origin.port': 0,
      'origin.adminPort': 0,
      'gateway.port': 0,
      'gateway.adminPort': 0,
      ...overrides,
    },
  });
}
