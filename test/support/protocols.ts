/**
 * The three ways a client reaches the gateway's API listener, for suites that run their
 * scenarios over each: cleartext HTTP/1.1, HTTP/2 over TLS (a throwaway certificate made with
 * openssl, trusted by the client alone) and h2c. Each protocol is the config overrides that
 * open its listener and the undici dispatcher that speaks it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { makeSelfSignedCertificate, type CertificateFiles } from '../../src/cli/local-certificate.ts';
import type { Config, ConfigKey } from '../../src/config/schema.ts';
import { tempDir } from './config.ts';

export type Protocol = 'http/1.1' | 'h2' | 'h2c';

export const PROTOCOLS: readonly Protocol[] = ['http/1.1', 'h2', 'h2c'];

/** What the access log records for each. */
export const LOGGED_PROTO: Readonly<Record<Protocol, string>> = { 'http/1.1': 'HTTP/1.1', h2: 'HTTP/2.0', h2c: 'HTTP/2.0' };

/** A self-signed certificate for localhost and 127.0.0.1, valid `days`, as `<dir>/<name>.pem` and `.key`. */
export function makeCertificate(dir: string, name = 'server', days = 2): CertificateFiles {
  const pair = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  makeSelfSignedCertificate(pair, name, days);
  return pair;
}

/** The overrides that open `protocol`'s listener (TLS: a fresh certificate in a temp dir). */
export function protocolOverrides(protocol: Protocol): Partial<Record<ConfigKey, unknown>> {
  if (protocol === 'h2c') return { 'http.h2c': true };
  if (protocol === 'http/1.1') return {};
  const { cert, key } = makeCertificate(tempDir('catalog-tls-'));
  return { 'http.tls.cert': cert, 'http.tls.key': key };
}

const H2C = { allowH2: true, useH2c: true };

/** A dispatcher that speaks to `config`'s listener as it expects; undefined: undici's default (HTTP/1.1). */
export function dispatcherFor(config: Config): Dispatcher | undefined {
  const cert = config['http.tls.cert'];
  if (cert !== null) return new Agent({ allowH2: true, connect: { ca: readFileSync(cert), preferH2: true } });
  // undici's Pool reads h2c from a top-level `useH2c` (lib/dispatcher/pool.js), which its types
  // declare only under `h2Options`, where the Pool does not look; an Agent passes it on.
  if (config['http.h2c']) return new Agent(H2C);
  return undefined;
}
