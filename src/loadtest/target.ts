/**
 * The servers a load test runs against: the ones named by flags, or an origin and a gateway this
 * process starts on embedded defaults (each in a child process, on free ports) and stops again.
 * Either way they are checked for reachability before any work is planned, so an unreachable
 * target is one clear line, not a stack trace after a minute of setup.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import type { Config } from '../config/schema.ts';
import { CLI, GATEWAY_NODE_FLAGS, startServerProcess, type ServerProcess } from './server-process.ts';

export interface LoadTarget {
  readonly mode: 'embedded' | 'external';
  /** The gateways loaded side by side: one, or a fleet's members. */
  readonly urls: readonly [string, ...string[]];
  /** The origin's API, when known (embedded targets): the circulation run lends there. */
  readonly originUrl?: string;
  /** Admin listeners whose metrics add up to the gateways' (empty when none was given). */
  readonly gatewayAdmins: readonly string[];
  readonly originAdmin: string | undefined;
  /** Embedded targets: the servers' own data directory (catalog, signing secret, registration). */
  readonly dataDir?: string;
  /** Stops what this process started; a no-op for external targets. */
  close(): Promise<void>;
}

/** The configuration as the target's servers see it: an embedded target's own data directory. */
export function targetConfig(config: Config, target: LoadTarget): Config {
  return target.dataDir === undefined ? config : Object.freeze({ ...config, dataDir: target.dataDir });
}

export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

function errorCode(err: unknown): string {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  if (typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string') return cause.code;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Any HTTP answer counts: a 401 or 404 still proves something is listening. */
export async function assertReachable(what: string, url: string): Promise<void> {
  try {
    const { body } = await request(url, { method: 'GET', headersTimeout: 5000, bodyTimeout: 5000 });
    await body.dump();
  } catch (err) {
    throw new UnreachableError(`cannot reach the ${what} at ${new URL(url).origin}: ${errorCode(err)}`);
  }
}

export async function externalTarget(
  urls: readonly [string, ...string[]],
  gatewayAdmins: readonly string[],
  originAdmin: string | undefined,
): Promise<LoadTarget> {
  for (const url of urls) await assertReachable('gateway', `${url}/v1/branches`);
  for (const admin of gatewayAdmins) await assertReachable("gateway's admin listener", `${admin}/healthz`);
  if (originAdmin !== undefined) await assertReachable("origin's admin listener", `${originAdmin}/healthz`);
  return { mode: 'external', urls, gatewayAdmins, originAdmin, close: () => Promise.resolve() };
}

export interface EmbeddedOptions {
  /** `--config FILE` passed on to both servers. */
  readonly config?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Called before a step that can take long (seeding the catalog on first start). */
  readonly onStep?: (message: string) => void;
}

/**
 * Origin and gateway on the embedded defaults and the caller's environment, each on free ports,
 * on a data directory of their own (seeded afresh, a few seconds): a run must not add its event
 * registration to the catalog of servers someone else is running, nor rewrite theirs.
 */
export async function embeddedTarget(options: EmbeddedOptions = {}): Promise<LoadTarget> {
  const logs = mkdtempSync(join(tmpdir(), 'catalog-loadtest-'));
  const dataDir = join(logs, 'data');
  const configArgs = ['--data-dir', dataDir, ...(options.config === undefined ? [] : ['--config', options.config])];
  const env = options.env ?? process.env;
  const started: ServerProcess[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(logs, { recursive: true, force: true });
  };
  try {
    options.onStep?.('starting the origin (it seeds the catalog on first start)…');
    const origin = await startServerProcess({
      name: 'origin',
      args: [CLI, 'origin', '--port', '0', '--admin-port', '0', ...configArgs],
      env,
      logFile: join(logs, 'origin.log'),
    });
    started.push(origin);
    options.onStep?.('starting the gateway…');
    const gateway = await startServerProcess({
      name: 'gateway',
      args: [CLI, 'gateway', '--port', '0', '--admin-port', '0', '--origin', origin.url, '--origin-probe', `${origin.adminUrl}/readyz`, ...configArgs],
      nodeFlags: GATEWAY_NODE_FLAGS,
      env,
      logFile: join(logs, 'gateway.log'),
    });
    started.push(gateway);
    return {
      mode: 'embedded',
      urls: [gateway.url],
      originUrl: origin.url,
      gatewayAdmins: gateway.adminUrl === undefined ? [] : [gateway.adminUrl],
      originAdmin: origin.adminUrl,
      dataDir,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
