/**
 * `catalog-gateway gateway` as an operator runs it, as a child process in front of a fault origin
 * that answers everything with OK: info-level log lines on stdout (no access lines) for a test to
 * wait on and signals for it to send. Both are stopped after the test.
 */
import type { TestContext } from 'node:test';
import { run, type CliProcess } from './cli-process.ts';
import { OK, startFaultOrigin, type FaultOrigin } from './fault-origin.ts';
import { HEALTH_PATH } from './health-check.ts';

export interface GatewayProcess {
  readonly gw: CliProcess;
  readonly origin: FaultOrigin;
  readonly url: string;
  readonly adminUrl: string;
}

/** `args` come after the origin and the ports (`--workers 2`, `--config FILE`…). */
export async function runGateway(t: TestContext, dataDir: string, args: readonly string[]): Promise<GatewayProcess> {
  const origin = await startFaultOrigin();
  origin.behave(() => OK);
  const gw = run(['gateway', '--origin', origin.url, '--origin-probe', HEALTH_PATH, '--port', '0', '--admin-port', '0', ...args], {
    CATALOG_DATA_DIR: dataDir,
    CATALOG_LOG_LEVEL: 'info',
    CATALOG_GATEWAY_ACCESS_LOG: 'false',
  });
  t.after(async () => {
    gw.child.kill('SIGKILL');
    await origin.close();
  });
  const { url, adminUrl } = JSON.parse(await gw.line((l) => l.includes('"msg":"listening"'))) as { url: string; adminUrl: string };
  return { gw, origin, url, adminUrl };
}
