/**
 * The listener's TLS identity, read from `http.tls.*` PEM files and checked before it is used:
 * a key that does not open the certificate, an expired certificate or a file that does not parse
 * is refused with a reason, so that start-up stops and a reload keeps the identity in use.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { Config } from '../../config/schema.ts';

/** Why a pair was refused; bounded, a metric label. */
export type TlsRefusal = 'unreadable' | 'invalid' | 'mismatch' | 'expired';

export class TlsIdentityError extends Error {
  override name = 'TlsIdentityError';
  readonly reason: TlsRefusal;
  constructor(reason: TlsRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface TlsPaths {
  readonly cert: string;
  readonly key: string;
  /** CAs of client certificates (mutual TLS), when they are required. */
  readonly clientCa: string | undefined;
}

/** The paths of a TLS listener, or `undefined` for cleartext. */
export function tlsPaths(config: Config): TlsPaths | undefined {
  const cert = config['http.tls.cert'];
  const key = config['http.tls.key'];
  if (cert === null || key === null) return undefined;
  const clientCa = config['http.tls.clientCertificates'] === 'required' ? (config['http.tls.clientCa'] ?? undefined) : undefined;
  return { cert, key, clientCa };
}

export interface TlsIdentity {
  /** What `createSecureServer` and `setSecureContext` take; the latter resets whatever is left out. */
  readonly context: SecureContextOptions;
  /** The leaf certificate's notAfter, in seconds since the epoch. */
  readonly expiresAt: number;
  /** SHA-256 fingerprint of the leaf certificate, for the log. */
  readonly fingerprint: string;
}

function read(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new TlsIdentityError('unreadable', `${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Reads and checks the files; throws a TlsIdentityError naming the file and what is wrong. */
export function readTlsIdentity(paths: TlsPaths, nowMs: number): TlsIdentity {
  const cert = read(paths.cert);
  const key = read(paths.key);
  const ca = paths.clientCa === undefined ? undefined : read(paths.clientCa);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new TlsIdentityError('invalid', `${paths.cert} holds no PEM certificate (${(err as Error).message})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new TlsIdentityError('invalid', `${paths.key} holds no PEM private key (${(err as Error).message})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new TlsIdentityError('mismatch', `the key in ${paths.key} does not belong to the certificate in ${paths.cert}`);
  if (leaf.validToDate.getTime() <= nowMs)
    throw new TlsIdentityError('expired', `the certificate in ${paths.cert} expired at ${leaf.validToDate.toISOString()}`);
  // TLS 1.2 at least (RFC 8996 deprecates 1.0 and 1.1); HTTP/2 itself requires 1.2 (RFC 9113 §9.2).
  const context: SecureContextOptions = { cert, key, minVersion: 'TLSv1.2', ...(ca === undefined ? {} : { ca }) };
  try {
    // The chain and the CA file are parsed only here; a context made now is one that will work.
    createSecureContext(context);
  } catch (err) {
    throw new TlsIdentityError(
      'invalid',
      `${paths.cert}, ${paths.key}${ca === undefined ? '' : ` or ${paths.clientCa ?? ''}`} cannot make a TLS context (${(err as Error).message})`,
    );
  }
  return { context, expiresAt: Math.floor(leaf.validToDate.getTime() / 1000), fingerprint: leaf.fingerprint256 };
}
