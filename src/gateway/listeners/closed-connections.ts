/**
 * The listener's open connections, for a drain to close what is left at its deadline, and a closed
 * connection's sockets made to let go of their listeners.
 *
 * Why the listeners go: a TLS connection's sockets stay reachable after they close until the next
 * full collection. Node keeps the JavaScript objects of a connection's native wraps (the TLS wrap,
 * the TCP handle under it, whose `reading` getter closes over the TLS socket) until V8 collects
 * them, and a scavenge reclaims a wrapper nothing else reaches only when no property was ever
 * added to it (V8's `--reclaim-unmodified-wrappers`); Node adds several. So every scavenge before
 * the next full collection found the TLS socket, the TCP socket under it and all their listeners
 * close over alive (the HTTP server's per-connection state, an HTTP/2 session), copied them and
 * promoted them to the old generation, where the next full collection marked and swept them.
 * Which wrap holds the socket was not pinned down (emptying the TLS wrap's own references changed
 * nothing); the listeners are a large part of what hangs from it, and a closed socket emits
 * nothing more, so once its 'close' has been emitted (to every listener: an emitter calls a copy
 * of its list) they are removed, and what a connection leaves to be promoted falls by a third to a
 * half (docs/performance.md, "Closed TLS connections let go of their listeners"). The sockets'
 * own state stays whole: Node may still read it.
 */
import type { Socket } from 'node:net';

/** A closed socket's listeners removed: one function for every socket, called as the emitter's `this`. */
function letGo(this: Socket): void {
  this.removeAllListeners();
}

export class OpenConnections {
  readonly #sockets = new Set<Socket>();
  /** One 'close' listener for every TCP socket: `on` spares each the wrapper `once` would make. */
  readonly #onClose: (this: Socket) => void;

  constructor() {
    const sockets = this.#sockets;
    this.#onClose = function (this: Socket): void {
      sockets.delete(this);
      this.removeAllListeners();
    };
  }

  /** A TCP connection the server accepted (its 'connection' event), kept until it closes. */
  accepted(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', this.#onClose);
  }

  /** A TLS socket over an accepted connection (its server's 'secureConnection'), which lets go of its listeners once closed. */
  secured(socket: Socket): void {
    socket.on('close', letGo);
  }

  /** Closes every connection still open. */
  destroyAll(): void {
    for (const socket of this.#sockets) socket.destroy();
  }
}
