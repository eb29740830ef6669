/**
 * Re-reads the listener's certificate and key on SIGHUP and when their files change, and hands a
 * checked identity to `apply` (the server's `setSecureContext`): new handshakes get it, open
 * connections keep theirs. A pair that fails the checks is refused with one log line and a
 * metric, and the identity in use stays.
 *
 * The directories are watched rather than the files: certbot and Kubernetes replace a file (or
 * a symlink to it) instead of writing into it, which a watch on the old inode never sees. A
 * directory's events come in bursts (a key and a certificate written one after the other), so a
 * reload waits for the burst to settle, and one whose files hold the same bytes does nothing.
 * A directory also holds other files, some written all the time (a log beside the pair): a
 * settled burst reads the pair only when a file of it (followed through its symlinks) is not the
 * one read last, by inode, size and times, so that such writes cost a `stat` of each file and
 * not a parse of the certificate and key (a few milliseconds each time).
 */
import { statSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../../shared/logger.ts';
import type { ListenerMetrics } from './listener-metrics.ts';
import { readTlsIdentity, TlsIdentityError, type TlsIdentity, type TlsPaths } from './tls-identity.ts';

const SETTLE_MS = 100;

export class CertificateReload {
  readonly #paths: TlsPaths;
  readonly #apply: (identity: TlsIdentity) => void;
  readonly #metrics: ListenerMetrics;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #watchers: FSWatcher[] = [];
  #current: TlsIdentity;
  /** The files as they were when last read (`stamp`), and whether what they held was taken. */
  #read: string;
  #taken = true;
  #settle: NodeJS.Timeout | undefined;
  readonly #onHangup = (): void => {
    this.reload('SIGHUP');
  };

  /** Reads the files once; throws a TlsIdentityError when they cannot serve. */
  constructor(paths: TlsPaths, apply: (identity: TlsIdentity) => void, metrics: ListenerMetrics, logger: Logger, now: () => number) {
    this.#paths = paths;
    this.#apply = apply;
    this.#metrics = metrics;
    this.#logger = logger;
    this.#now = now;
    this.#read = stamp(paths);
    this.#current = readTlsIdentity(paths, now());
    metrics.certificateInUse(this.#current.expiresAt);
  }

  get identity(): TlsIdentity {
    return this.#current;
  }

  /** Starts watching the files and listening for SIGHUP. */
  start(): void {
    const files = [this.#paths.cert, this.#paths.key, this.#paths.clientCa].filter((path) => path !== undefined);
    for (const dir of new Set(files.map((path) => dirname(path)))) {
      const watcher = watch(dir, { persistent: false }, () => {
        clearTimeout(this.#settle);
        this.#settle = setTimeout(() => {
          this.reload('file change');
        }, SETTLE_MS);
      });
      watcher.on('error', (err) => {
        this.#logger.warn({ err, dir }, 'certificate directory no longer watched; SIGHUP still reloads');
      });
      this.#watchers.push(watcher);
    }
    process.on('SIGHUP', this.#onHangup);
  }

  stop(): void {
    clearTimeout(this.#settle);
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers.length = 0;
    process.off('SIGHUP', this.#onHangup);
  }

  /** True when the files' identity is in use afterwards (new or unchanged). */
  reload(trigger: 'SIGHUP' | 'file change'): boolean {
    const files = stamp(this.#paths);
    if (trigger === 'file change' && files === this.#read) return this.#taken;
    this.#read = files;
    this.#taken = false;
    let next: TlsIdentity;
    try {
      next = readTlsIdentity(this.#paths, this.#now());
    } catch (err) {
      if (!(err instanceof TlsIdentityError)) throw err;
      this.#metrics.reloaded(err.reason);
      this.#logger.error(
        { trigger, reason: err.reason, detail: err.message, fingerprint: this.#current.fingerprint },
        'new certificate refused; the one in use stays',
      );
      return false;
    }
    this.#taken = true;
    if (trigger === 'file change' && sameFiles(next, this.#current)) return true;
    this.#apply(next);
    this.#current = next;
    this.#metrics.reloaded('ok');
    this.#metrics.certificateInUse(next.expiresAt);
    this.#logger.info({ trigger, fingerprint: next.fingerprint, expires: new Date(next.expiresAt * 1000).toISOString() }, 'certificate reloaded');
    return true;
  }
}

/**
 * Each file's inode, size and change times (through symlinks). A file that cannot be looked at
 * stands as its error's code, so that reading it says why (`unreadable`).
 */
function stamp(paths: TlsPaths): string {
  return [paths.cert, paths.key, paths.clientCa]
    .map((path) => {
      if (path === undefined) return '';
      try {
        const stats = statSync(path, { bigint: true });
        return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code ?? 'error';
      }
    })
    .join(' ');
}

function sameFiles(a: TlsIdentity, b: TlsIdentity): boolean {
  const bytes = (identity: TlsIdentity): unknown[] => [identity.context.cert, identity.context.key, identity.context.ca];
  const [x, y] = [bytes(a), bytes(b)];
  return x.every((part, i) => (Buffer.isBuffer(part) && Buffer.isBuffer(y[i]) ? part.equals(y[i]) : part === y[i]));
}
