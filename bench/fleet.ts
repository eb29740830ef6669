/**
 * The servers a bench starts, each in its own child process on loopback with free ports, all
 * sharing one data directory (catalog and signing secret) and one temporary log directory.
 * Inherited CATALOG_* variables are dropped so the figures never depend on the caller's shell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { CLI, GATEWAY_NODE_FLAGS, cleanEnv, startServerProcess, type ServerProcess } from '../src/loadtest/server-process.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import { QuerySpace } from './query-space.ts';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** A command a server's Node runs under (it must keep the pid, as valgrind does), and how long it may take to start. */
export interface Under {
  readonly launcher: readonly string[];
  readonly startTimeoutMs: number;
}

export class Fleet {
  readonly logDir = mkdtempSync(join(tmpdir(), 'catalog-bench-'));
  readonly #dataDir: string;
  readonly #started: ServerProcess[] = [];

  constructor(dataDir: string) {
    this.#dataDir = resolve(REPO_ROOT, dataDir);
  }

  get dataDir(): string {
    return this.#dataDir;
  }

  async #start(
    name: string,
    args: readonly string[],
    env: Record<string, string>,
    nodeFlags: readonly string[] = [],
    cwd = REPO_ROOT,
    under?: Under,
  ): Promise<ServerProcess> {
    const server = await startServerProcess({
      name,
      args,
      env: cleanEnv({ CATALOG_DATA_DIR: this.#dataDir, ...env }),
      cwd,
      nodeFlags,
      logFile: join(this.logDir, `${name.replace(/\W+/g, '-')}.log`),
      ...under,
    });
    this.#started.push(server);
    return server;
  }

  /** The real origin; answers stay fresh for an hour so warmed gateway entries outlive the bench. */
  origin(env: Record<string, string> = {}, nodeFlags: readonly string[] = []): Promise<ServerProcess> {
    return this.#start('origin', [CLI, 'origin', '--port', '0', '--admin-port', '0'], { CATALOG_ORIGIN_MAX_AGE_SECONDS: '3600', ...env }, nodeFlags);
  }

  /**
   * A gateway with the V8 flags the shipped entry points give it (GATEWAY_NODE_FLAGS), probing
   * the origin's admin `/readyz`, or `/` of an origin without an admin listener. Its disk tier is
   * its own and new, in the run's temporary directory: gateways of one run are not one gateway,
   * and a run never starts warm from the one before. `checkout`: the root of another checkout of
   * the project (with its own `npm ci`), whose gateway runs instead, for a bench's A/B. `under`: a
   * command Node runs under (callgrind), and the start-up time it needs.
   */
  gateway(
    name: string,
    origin: ServerProcess,
    env: Record<string, string>,
    nodeFlags: readonly string[] = [],
    checkout?: string,
    under?: Under,
  ): Promise<ServerProcess> {
    const probe = origin.adminUrl === undefined ? '/' : `${origin.adminUrl}/readyz`;
    const disk = { CATALOG_GATEWAY_CACHE_DISK_PATH: join(this.logDir, `${name.replace(/\W+/g, '-')}-${this.#started.length}-cache`) };
    const cli = checkout === undefined ? CLI : join(checkout, 'bin', 'catalog-gateway.js');
    return this.#start(
      name,
      [cli, 'gateway', '--port', '0', '--admin-port', '0', '--origin', origin.url, '--origin-probe', probe],
      { ...disk, ...env },
      [...GATEWAY_NODE_FLAGS, ...nodeFlags],
      checkout,
      under,
    );
  }

  /** What a bench asks the catalog with: search terms drawn from its database and a `catalog:read` token. */
  async reader(): Promise<{ readonly space: QuerySpace; readonly authorization: string }> {
    const token = await mintToken(loadOrCreateSecret(join(this.#dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 });
    return { space: new QuerySpace(readCatalogVocabulary(join(this.#dataDir, 'catalog.db'))), authorization: `Bearer ${token}` };
  }

  /** A bench script such as bare-server.ts or tiny-origin.ts, run by Node's own type stripping like the servers. */
  script(name: string, script: string, args: readonly string[] = [], nodeFlags: readonly string[] = []): Promise<ServerProcess> {
    return this.#start(name, [join(REPO_ROOT, 'bench', script), ...args], {}, nodeFlags);
  }

  async stop(server: ServerProcess): Promise<void> {
    await server.stop();
    this.#started.splice(this.#started.indexOf(server), 1);
  }

  async close(): Promise<void> {
    await Promise.all(this.#started.splice(0).map((s) => s.stop()));
    rmSync(this.logDir, { recursive: true, force: true });
  }
}
