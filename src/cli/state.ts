/**
 * The state every command shares: the data directory (the package's `data/` unless
 * `--data-dir` or CATALOG_DATA_DIR says otherwise, src/config/load.ts) holds the signing secret,
 * the catalog and the gateway's event registration. A token is only good where its secret is,
 * so a command about to make a new secret says so rather than leave the newcomer with a token
 * the running servers refuse.
 */
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { loadConfig, type LoadOptions } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { secretPath } from '../shared/signing-key.ts';

/** The command's configuration, with a line on stderr when it will create a signing secret. */
export function commandConfig(command: string, options: LoadOptions): Config {
  const config = loadConfig(options);
  const secret = secretPath(config);
  // A fleet's workers find the secret their primary announced (and made).
  if (config['auth.jwks'] === null && cluster.isPrimary && !existsSync(secret)) {
    process.stderr.write(
      `catalog-gateway ${command}: no signing secret at ${secret} yet, so this creates one; servers that use another data directory will refuse tokens signed with it (--data-dir or CATALOG_DATA_DIR points every command at the same one)\n`,
    );
  }
  return config;
}
