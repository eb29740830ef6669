/**
 * `start --tls`: a self-signed certificate for this machine (localhost, 127.0.0.1, ::1), made
 * once in `<dataDir>/tls` and reused while it is valid, so that HTTPS and HTTP/2 can be tried on
 * a fresh clone. Node has no X.509 issuing API, so the `openssl` program (Debian's `openssl`
 * package) makes it.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

const LOCAL_DAYS = 365;
/** A certificate with less left than this is replaced before it is served. */
const RENEW_BEFORE_MS = 7 * 86_400_000;

/** A P-256 key and a certificate for it valid `days` from now, for the local names only. */
export function makeSelfSignedCertificate(files: CertificateFiles, commonName: string, days: number): void {
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', files.key, '-out', files.cert, '-days', String(days), '-subj', `/CN=${commonName}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(missing ? 'making a local certificate needs the openssl program (Debian: apt-get install openssl)' : `openssl could not make a certificate: ${String((err as { stderr?: unknown }).stderr ?? err)}`, { cause: err });
  }
  chmodSync(files.key, 0o600);
}

/** `<dataDir>/tls/cert.pem` and `key.pem`, made now unless a valid pair is there. */
export function localCertificate(dataDir: string, now = Date.now()): CertificateFiles {
  const dir = join(dataDir, 'tls');
  const files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  if (existsSync(files.cert) && existsSync(files.key) && new X509Certificate(readFileSync(files.cert)).validToDate.getTime() - now > RENEW_BEFORE_MS) return files;
  mkdirSync(dir, { recursive: true });
  makeSelfSignedCertificate(files, 'catalog-gateway local', LOCAL_DAYS);
  return files;
}
