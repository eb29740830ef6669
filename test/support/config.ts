/** Configs for tests: every port ephemeral, state in a fresh temp directory, logs silent. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import type { Config, ConfigKey } from '../../src/config/schema.ts';

const made: string[] = [];

/**
 * Every directory made here is removed when the test file's process exits (node:test runs each
 * file in a process of its own), whether its test passed or not: a full run makes about 240 of
 * them, a catalog database in many, and left behind they filled /tmp run after run.
 */
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = 'catalog-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
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
