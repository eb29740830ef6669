/**
 * `<dataDir>/gateway.pid`: the process that reloads the gateway's configuration on SIGHUP (`start`,
 * or `gateway` alone or as the workers' primary), so that `catalog-gateway reload` finds it as
 * `nginx -s reload` finds nginx.pid. Removed when that process stops, if it is still its own.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.ts';

export function pidFilePath(config: Config): string {
  return join(config.dataDir, 'gateway.pid');
}

/** Writes this process's pid; returns what removes the file again on stop. */
export function writePidFile(config: Config): () => void {
  const path = pidFilePath(config);
  const own = `${String(process.pid)}\n`;
  writeFileSync(path, own);
  return () => {
    // Another gateway on the same data directory may have written it since: that one is not ours to remove.
    if (readPid(path) === process.pid) rmSync(path, { force: true });
  };
}

/** The pid the file holds, or undefined when there is no file or no number in it. */
export function readPid(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
