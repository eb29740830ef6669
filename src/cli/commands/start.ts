import { request } from 'undici';
import { loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { startGateway } from '../../gateway/gateway.ts';
import { startOrigin } from '../../origin/origin.ts';
import { onReloadSignal, onShutdownSignal } from '../../shared/lifecycle.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../shared/signing-key.ts';
import type { Command } from '../command.ts';
import { commandConfig } from '../state.ts';
import { localCertificate } from '../local-certificate.ts';
import { writePidFile } from '../pid-file.ts';

/** Searches tried, in order, for the banner's example: the first that finds books is shown. */
const EXAMPLE_QUERIES = ['dune', 'winter', 'river', 'silent', 'the'];
const TOKEN_TTL_SECONDS = 24 * 3600;

interface Example {
  readonly q: string;
  /** A copy that can be lent now, among the books the search shows. */
  readonly loan: { readonly book: string; readonly branch: string } | undefined;
}

export async function example(originUrl: string, token: string): Promise<Example> {
  for (const q of EXAMPLE_QUERIES) {
    const res = await request(`${originUrl}/v1/books?q=${q}&limit=5`, { headers: { authorization: `Bearer ${token}` } });
    const page = (await res.body.json()) as { results?: { id: string; availability: { branch: string; available: boolean }[] }[] };
    if (res.statusCode !== 200 || (page.results?.length ?? 0) === 0) continue;
    const book = page.results?.find((b) => b.availability.some((a) => a.available));
    const branch = book?.availability.find((a) => a.available)?.branch;
    return { q, loan: book === undefined || branch === undefined ? undefined : { book: book.id, branch } };
  }
  return { q: EXAMPLE_QUERIES[0] ?? 'dune', loan: undefined };
}

export async function exampleToken(config: Config, scope: string): Promise<string | undefined> {
  if (config['auth.jwks'] !== null) return undefined;
  return mintToken(loadOrCreateSecret(secretPath(config)), {
    subject: 'dev',
    scope,
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
    `Reload the gateway's configuration with \`npx catalog-gateway reload\` (SIGHUP to pid ${String(process.pid)}).`,
    'Mint another token with `npx catalog-gateway token`. Ctrl-C stops both servers.',
    '',
  ].join('\n');
}

export const start: Command = {
  name: 'start',
  summary: 'Run the catalog origin and the caching gateway in front of it, and print a curl to try.',
  listeners: ['gateway.port', 'gateway.adminPort', 'origin.port', 'origin.adminPort'],
  flags: [
    { name: 'port', key: 'gateway.port', value: 'PORT', description: 'gateway API port (0 picks a free one)' },
    { name: 'origin-port', key: 'origin.port', value: 'PORT', description: 'origin API port (0 picks a free one)' },
    { name: 'admin-port', key: 'gateway.adminPort', value: 'PORT', description: 'gateway admin port (0 picks a free one)' },
    { name: 'origin-admin-port', key: 'origin.adminPort', value: 'PORT', description: 'origin admin port (0 picks a free one)' },
    { name: 'tls', boolean: true, description: 'serve the gateway over HTTPS (HTTP/2 and HTTP/1.1) with a self-signed certificate made in <dataDir>/tls' },
  ],
  async run(args) {
    const config = commandConfig('start', args.config);
    const tls = args.options.tls === true ? localCertificate(config.dataDir, config['gateway.host']) : undefined;
    const origin = await startOrigin(config);
    const tlsFiles = tls === undefined ? {} : { 'http.tls.cert': tls.cert, 'http.tls.key': tls.key };
    const gatewayConfig = (): Config =>
      loadConfig({
        ...args.config,
        overrides: { ...tlsFiles, 'gateway.origin': origin.url, 'gateway.upstream.probe': `${origin.adminUrl}/readyz`, 'gateway.events.register': true },
      });
    const gateway = await startGateway(gatewayConfig()).catch(async (err: unknown) => {
      await origin.stop();
      throw err;
    });
    const removePidFile = writePidFile(config);
    onShutdownSignal(async () => {
      await gateway.stop();
      await origin.stop();
      removePidFile();
    });
    onReloadSignal(() => {
      gateway.reload(gatewayConfig);
    });
    const token = await exampleToken(config, config['auth.requiredScope']);
    const writer = await exampleToken(config, `${config['auth.requiredScope']} catalog:write`);
    // The certificate is this machine's own: curl is told to trust it, and to ask for HTTP/2.
    const client = tls === undefined ? 'curl -i' : `curl --http2 --cacert ${tls.cert} -i`;
    let curl: string;
    if (token === undefined || writer === undefined) {
      curl = `${client} -H "Authorization: Bearer $TOKEN" '${gateway.url}/v1/books?q=dune'   # TOKEN from your identity provider (auth.jwks is set)`;
    } else {
      const { q, loan } = await example(origin.url, token);
      curl = `${client} -H 'Authorization: Bearer ${token}' '${gateway.url}/v1/books?q=${q}'`;
      if (loan !== undefined) {
        curl += `\n\nLend a copy (a catalog:write token; repeat until 409, a branch may hold three). When the last\nfree copy goes, the origin's event purges what the gateway stored, and the search above shows\nthe book unavailable there at once, though the origin lets answers be cached ${config['origin.maxAgeSeconds']} s:\n${client} -X POST -H 'Authorization: Bearer ${writer}' -H 'content-type: application/json' \\\n  -d '${JSON.stringify(loan)}' '${gateway.url}/v1/loans'`;
      }
    }
    process.stdout.write(banner(gateway.url, gateway.adminUrl, origin.url, origin.adminUrl, curl));
  },
};
