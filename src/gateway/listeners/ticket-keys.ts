/**
 * The key that encrypts TLS session tickets (RFC 8446 §4.6.1; RFC 5077 for TLS 1.2), shared by
 * every worker of a host and replaced every `http.tls.ticketKeyRotationMs`, as nginx does with
 * `ssl_session_ticket_key` files: a client resumes its session (no certificate, no key exchange
 * signature) whichever worker takes its next connection, and a stolen key opens only the tickets
 * of its own period.
 *
 * Workers get the key from the primary, when they start listening and at each rotation, over the
 * cluster's IPC channel; a gateway alone rotates its own. Node's TLS server holds one key, so a
 * ticket issued under the previous key no longer resumes: that client makes a full handshake once.
 * A certificate reload (`setSecureContext`) would give the server a fresh random key, so the
 * listener hands the current one back with the new identity (`keepTicketKeys`).
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Server as TlsServer, SecureContextOptions } from 'node:tls';

/** Node's ticket key: 16 bytes of key name, 16 of HMAC secret, 16 of AES key. */
const KEY_BYTES = 48;

interface TicketKeysOrder {
  readonly type: 'catalog-gateway:ticket-keys';
  /** Base64: IPC messages are JSON. */
  readonly keys: string;
}

function isTicketKeysOrder(message: unknown): message is TicketKeysOrder {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'catalog-gateway:ticket-keys';
}

/** A new key every `periodMs`, handed to `apply` (the first at once). */
export class TicketKeyRotation {
  #keys = randomBytes(KEY_BYTES);
  readonly #timer: NodeJS.Timeout;

  constructor(periodMs: number, apply: (keys: Buffer) => void) {
    apply(this.#keys);
    this.#timer = setInterval(() => {
      this.#keys = randomBytes(KEY_BYTES);
      apply(this.#keys);
    }, periodMs);
    this.#timer.unref();
  }

  get keys(): Buffer {
    return this.#keys;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

function send(worker: Worker, keys: Buffer): void {
  if (worker.isConnected()) worker.send({ type: 'catalog-gateway:ticket-keys', keys: keys.toString('base64') } satisfies TicketKeysOrder);
}

/** In the primary: each worker gets the host's key as it starts listening, and every new one. */
export function shareTicketKeys(periodMs: number): TicketKeyRotation {
  const rotation = new TicketKeyRotation(periodMs, (keys) => {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker !== undefined) send(worker, keys);
  });
  cluster.on('listening', (worker) => {
    send(worker, rotation.keys);
  });
  return rotation;
}

/**
 * Gives `server` its ticket keys: the primary's in a worker (which registers before it listens, so
 * the first key, sent once it does, is not missed), its own rotation otherwise. Returns the stop.
 */
export function useTicketKeys(server: TlsServer, periodMs: number): () => void {
  if (cluster.isWorker) {
    const onMessage = (message: unknown): void => {
      if (isTicketKeysOrder(message)) server.setTicketKeys(Buffer.from(message.keys, 'base64'));
    };
    process.on('message', onMessage);
    return () => {
      process.off('message', onMessage);
    };
  }
  const rotation = new TicketKeyRotation(periodMs, (keys) => {
    server.setTicketKeys(keys);
  });
  return () => {
    rotation.stop();
  };
}

/** `identity` for `setSecureContext`, with the ticket keys `server` uses now, which it would otherwise lose. */
export function keepTicketKeys(server: TlsServer, identity: SecureContextOptions): SecureContextOptions {
  return { ...identity, ticketKeys: server.getTicketKeys() };
}
