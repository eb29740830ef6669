import { request } from 'undici';
import { loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { startGateway } from '../../gateway/gateway.ts';
import { startOrigin } from '../../origin/origin.ts';
import { onShutdownSignal } from '../../shared/lifecycle.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../shared/signing-key.ts';
import type { Command } from '../command.ts';

/** Searches tried, in order, for the banner's example: the first that finds books is shown. */
const EXAMPLE_QUERIES = ['dune', 'winter', 'river', 'silent', 'the'];
const TOKEN_TTL_SECONDS = 24 * 3600;

async function exampleQuery(originUrl: string, token: string): Promise<string> {
  for (const q of EXAMPLE_QUERIES) {
    const res = await request(`${originUrl}/v1/books?q=${q}&limit=1`, { headers: { authorization: `Bearer ${token}` } });
    const page = (await res.body.json()) as { results?: unknown[] };
    if (res.statusCode === 200 && (page.results?.length ?? 0) > 0) return q;
  }
  return EXAMPLE_QUERIES[0] ?? 'dune';
}

async function exampleToken(config: Config): Promise<string | undefined> {
  if (config['auth.jwks'] !== null) return undefined;
  return mintToken(loadOrCreateSecret(secretPath(config)), {
    subject: 'dev',
    scope: config['auth.requiredScope'],
    ttlSeconds: TOKEN_TTL_SECONDS,
    issuer: config['auth.issuer'],
    audience: config['auth.audience'],
  });
}

function banner(gatewayUrl: string, gatewayAdmin: string, originUrl: string, originAdmin: string, curl: string): string {
  return [
    '',
    'catalog-gateway is running: the caching gateway in front of the catalog origin.',
    `  gateway  ${gatewayUrl}   admin ${gatewayAdmin}/metrics  /healthz  /readyz`,
    `  origin   ${originUrl}   admin ${originAdmin}/metrics`,
    '',
    'Search the catalog through the gateway (run it twice: the second answer is a cache hit):',
    curl,
    '',
    'Mint another token with `npx catalog-gateway token`. Ctrl-C stops both servers.',
    '',
  ].join('\n');
}

export const start: Command = {
  name: 'start',
  summary: 'Run the catalog origin and the caching gateway in front of it, and print a curl to try.',
  flags: [
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'gateway API port (0 picks a free one)' },
    { name: 'origin-port', key: 'origin.port', value: 'PORT', description: 'origin API port (0 picks a free one)' },
  ],
  async run(args) {
    const config = loadConfig(args.config);
    const origin = await startOrigin(config);
    const gateway = await startGateway(loadConfig({ ...args.config, overrides: { 'gateway.origin': origin.url, 'gateway.events.register': true } })).catch(async (err: unknown) => {
      await origin.stop();
      throw err;
    });
    onShutdownSignal(async () => {
      await gateway.stop();
      await origin.stop();
    });
    const token = await exampleToken(config);
    const curl =
      token === undefined
        ? `curl -i -H "Authorization: Bearer $TOKEN" '${gateway.url}/v1/books?q=dune'   # TOKEN from your identity provider (auth.jwks is set)`
        : `curl -i -H 'Authorization: Bearer ${token}' '${gateway.url}/v1/books?q=${await exampleQuery(origin.url, token)}'`;
    process.stdout.write(banner(gateway.url, gateway.adminUrl, origin.url, origin.adminUrl, curl));
  },
};
