/**
 * `start --tls`: a self-signed certificate for this machine (localhost and the address the gateway
 * listens on: 127.0.0.1 by default), made once in `<dataDir>/tls` and reused while it is valid
 * and names that address, so that HTTPS and HTTP/2 can be tried on a fresh clone. It names no
 * address the gateway does not listen on: a client that trusts it for `::1` would find no server.
 * Node has no X.509 issuing API, so the `openssl` program (Debian's `openssl` package) makes it.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

const LOCAL_DAYS = 365;
/** A certificate with less left than this is replaced before it is served. */
const RENEW_BEFORE_MS = 7 * 86_400_000;

/** The addresses a client reaches a listener on `host` by, for the certificate to name. */
function addressesOf(host: string): readonly string[] {
  if (host === '0.0.0.0') return ['127.0.0.1'];
  if (host === '::' || host === '') return ['127.0.0.1', '::1'];
  return isIP(host) === 0 ? [] : [host];
}

/** The kinds of key a certificate made here may have: P-256 by default, RSA 2048 for a bench of what most sites serve. */
export const CERTIFICATE_KEYS = ['p256', 'rsa2048'] as const;
export type CertificateKey = (typeof CERTIFICATE_KEYS)[number];

const NEW_KEY: Readonly<Record<CertificateKey, readonly string[]>> = {
  p256: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  rsa2048: ['-newkey', 'rsa:2048'],
};

/** A `key` (P-256 unless said) and a certificate for it valid `days` from now, for localhost and a listener on `host`. */
export function makeSelfSignedCertificate(files: CertificateFiles, commonName: string, days: number, host = '127.0.0.1', key: CertificateKey = 'p256'): void {
  const names = [
    'DNS:localhost',
    ...(isIP(host) === 0 && host !== '' && host !== 'localhost' ? [`DNS:${host}`] : []),
    ...addressesOf(host).map((address) => `IP:${address}`),
  ];
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        ...NEW_KEY[key],
        '-nodes',
        '-keyout',
        files.key,
        '-out',
        files.cert,
        '-days',
        String(days),
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        `subjectAltName=${names.join(',')}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? 'making a local certificate needs the openssl program (Debian: apt-get install openssl)'
        : `openssl could not make a certificate: ${String((err as { stderr?: unknown }).stderr ?? err)}`,
      { cause: err },
    );
  }
  chmodSync(files.key, 0o600);
}

/** Whether `cert` still serves a gateway on `host`: valid for a while yet, and naming its addresses. */
function serves(cert: X509Certificate, host: string, now: number): boolean {
  return cert.validToDate.getTime() - now > RENEW_BEFORE_MS && addressesOf(host).every((address) => cert.checkIP(address) !== undefined);
}

/** `<dataDir>/tls/cert.pem` and `key.pem` for a gateway on `host`, made now unless a pair that serves it is there. */
export function localCertificate(dataDir: string, host: string, now = Date.now()): CertificateFiles {
  const dir = join(dataDir, 'tls');
  const files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  if (existsSync(files.cert) && existsSync(files.key) && serves(new X509Certificate(readFileSync(files.cert)), host, now)) return files;
  mkdirSync(dir, { recursive: true });
  makeSelfSignedCertificate(files, 'catalog-gateway local', LOCAL_DAYS, host);
  return files;
}
