/**
 * `catalog-gateway gateway --workers N --config config/examples/http-cache.jsonc` (every path
 * cached by RFC 9111, no token) in front of a given origin, as a child process, with a client that
 * sends each request on a connection of its own, so node:cluster hands each to the next worker.
 */
import { Agent, request } from 'undici';
import { run, type CliProcess } from './cli-process.ts';
import { tempDir } from './config.ts';
import { get, metricValue, until, type Reply } from './harness.ts';
import { HEALTH_PATH } from './health-check.ts';

export interface HttpCacheWorkers {
  readonly gateway: CliProcess;
  readonly url: string;
  readonly adminUrl: string;
  /** One request on a connection of its own. */
  fresh(target: string, method?: string, headers?: Record<string, string>): Promise<Reply>;
  /** The primary's `/metrics`: its workers' summed. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** Resolves once every worker is up. */
export async function startHttpCacheWorkers(originUrl: string, workers: number): Promise<HttpCacheWorkers> {
  const gateway = run(
    [
      'gateway',
      '--workers',
      String(workers),
      '--config',
      'config/examples/http-cache.jsonc',
      '--origin',
      originUrl,
      '--origin-probe',
      HEALTH_PATH,
      '--port',
      '0',
      '--admin-port',
      '0',
    ],
    { CATALOG_DATA_DIR: tempDir(), CATALOG_LOG_LEVEL: 'info', CATALOG_GATEWAY_ACCESS_LOG: 'false' },
  );
  const adminUrl = (JSON.parse(await gateway.line((l) => l.includes('"msg":"listening"'))) as { adminUrl: string }).adminUrl;
  const url = (JSON.parse(await gateway.line((l) => l.includes('"msg":"worker listening"'))) as { url: string }).url;
  const metrics = async (): Promise<string> => (await get(`${adminUrl}/metrics`)).body;
  await until(async () => metricValue(await metrics(), 'catalog_gateway_workers') === workers);
  const agent = new Agent({ pipelining: 0 });
  return {
    gateway,
    url,
    adminUrl,
    async fresh(target, method = 'GET', headers = {}) {
      const res = await request(`${url}${target}`, { method, headers, dispatcher: agent, reset: true });
      return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
    },
    metrics,
    async stop() {
      await agent.close();
      gateway.child.kill('SIGKILL');
    },
  };
}
