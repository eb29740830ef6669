/**
 * `gateway.workerAccept: reuseport`: every worker accepts from a listening socket of its own on the
 * API port (Linux `SO_REUSEPORT`, Node's `reusePort`), and the kernel hands each new connection to
 * one of those sockets by a hash of its addresses, as nginx's `listen … reuseport` does. On the one
 * socket that `workers` shares, every connection wakes every worker waiting on it, and all but one
 * find nothing to accept (libuv does not ask for `EPOLLEXCLUSIVE`); here it wakes one.
 *
 * The primary holds the port: a socket bound with `SO_REUSEPORT` that never listens
 * (`net.BoundSocket`), so that port 0 is resolved once for all the workers, and the port stays the
 * gateway's while workers come and go, a socket that does not listen taking no connection. Before
 * that it makes sure nobody listens there already: a second gateway would otherwise join the first
 * one's sockets and take a share of its connections. A worker asks the primary for the address,
 * listens on it (node:cluster leaves a `reusePort` listen to the worker alone) and tells the primary
 * that it listens, which node:cluster does not see: the primary then emits the worker's
 * 'listening' as node:cluster would, for what waits on it (start-up, the rolling restart, the TLS
 * ticket keys).
 *
 * The price, why this is not the default: a worker that drains (a rolling restart, a stop) closes
 * its socket, and Linux resets the connections still waiting in that socket's accept queue, unless
 * `net.ipv4.tcp_migrate_req` is 1, which moves them to another worker's socket (docs/fleet.md).
 */
import cluster, { type Worker } from 'node:cluster';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { BoundSocket } from 'node:net';
import { Asker, typeOf } from './messages.ts';

/** The API address the primary holds: a numeric address, and the port that 0 became. */
export interface ApiAddress {
  readonly address: string;
  readonly port: number;
}

/** Worker → primary: where to listen. */
interface AddressQuestion {
  readonly type: 'catalog-gateway:api-address';
  readonly id: number;
}

/** Primary → worker: the answer. */
interface AddressAnswer extends ApiAddress {
  readonly type: 'catalog-gateway:api-address-is';
  readonly id: number;
}

/** Worker → primary: it listens on its own socket. */
interface OwnListening extends ApiAddress {
  readonly type: 'catalog-gateway:listening-own-socket';
}

export interface HeldPort extends ApiAddress {
  release(): void;
}

/**
 * In the primary: binds the API address with `SO_REUSEPORT`, without listening, once nobody
 * listens there. Throws as a listen would (`code`, `address`, `port`), so the refusal names the
 * port as for any other mode.
 */
export async function holdApiPort(host: string, port: number): Promise<HeldPort> {
  // BoundSocket takes numeric addresses only; listen() looks a name up the same way.
  const { address } = await lookup(host);
  const held = new BoundSocket({ host: address, port, reusePort: true });
  const bound = held.address();
  try {
    // Bound without SO_REUSEPORT beside the held socket, which does not listen: refused only when
    // someone listens on the port, such as another gateway's workers.
    new BoundSocket({ host: address, port: bound.port }).close();
  } catch (err) {
    held.close();
    throw err;
  }
  return {
    address,
    port: bound.port,
    release() {
      held.close();
    },
  };
}

/** Linux moves a closing listener's queued connections to another socket of the port only when this is 1. */
export function migratesQueuedConnections(): boolean {
  try {
    return readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'latin1').trim() === '1';
  } catch {
    return false;
  }
}

/**
 * In the primary: answers a worker asking where to listen, and turns its report that it listens
 * into the worker's 'listening' event. True when `message` was one of these.
 */
export function answerOwnSocketWorker(held: ApiAddress, worker: Worker, message: unknown): boolean {
  const type = typeOf(message);
  if (type === 'catalog-gateway:api-address') {
    const { id } = message as AddressQuestion;
    if (worker.isConnected()) worker.send({ type: 'catalog-gateway:api-address-is', id, address: held.address, port: held.port } satisfies AddressAnswer);
    return true;
  }
  if (type === 'catalog-gateway:listening-own-socket') {
    const { address, port } = message as OwnListening;
    // What node:cluster's primary emits when a worker listens through it (lib/internal/cluster/primary.js).
    const info = { address, port, addressType: address.includes(':') ? 6 : 4, fd: undefined };
    worker.emit('listening', info);
    cluster.emit('listening', worker, info);
    return true;
  }
  return false;
}

const PRIMARY = {
  send: (message: { readonly type: string }) => process.send?.(message),
  on: (event: 'message', listener: (message: unknown) => void) => process.on(event, listener),
  off: (event: 'message', listener: (message: unknown) => void) => process.off(event, listener),
};

/** In a worker: listens on a socket of its own at the primary's address, and tells the primary. Returns the URL. */
export async function listenOnOwnSocket(listen: (host: string, port: number, reusePort: boolean) => Promise<string>): Promise<string> {
  const asker = new Asker<ApiAddress | undefined, Omit<AddressQuestion, 'id'>>(PRIMARY, {
    of: (message) => {
      if (typeOf(message) !== 'catalog-gateway:api-address-is') return undefined;
      const { id, address, port } = message as AddressAnswer;
      return { id, value: { address, port } };
    },
    none: undefined,
    timeoutMs: 5000,
  });
  const at = await asker.ask({ type: 'catalog-gateway:api-address' });
  if (at === undefined) throw new Error('the primary did not say where to listen (gateway.workerAccept: reuseport)');
  const url = await listen(at.address, at.port, true);
  process.send?.({ type: 'catalog-gateway:listening-own-socket', ...at } satisfies OwnListening);
  return url;
}
