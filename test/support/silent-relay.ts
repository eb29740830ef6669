/**
 * A TCP relay between a gateway and Redis that can stop forwarding without closing anything: the
 * way a partition looks from both ends (no refusal, no reset, just silence). While cut, the bytes
 * each side sends are held, as the sender's kernel holds them for retransmission; at the heal they
 * go on, except those of a side that reset its socket meanwhile (its kernel dropped them with the
 * socket). `heal({ late: true })` delivers even those, as bytes that reached Redis's socket before
 * the reset and ran only after a slow command would. It can also add a delay to every chunk, for
 * latency on a link, and listen on another address (test/support/netns/ puts one in front of each
 * server of a network namespace).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface SilentRelay {
  /** `redis://<listen host>:<port>` through the relay. */
  readonly url: string;
  /**
   * Stops forwarding, in both directions, on every connection and on new ones; with `onText`, from
   * the first chunk a client sends that contains it (held with what follows), so a test can cut
   * the link just as one given command leaves.
   */
  cut(options?: { readonly onText?: string }): void;
  heal(options?: { readonly late?: boolean }): void;
  close(): Promise<void>;
}

/** One direction of one connection. */
class Direction {
  readonly #from: Socket;
  readonly #to: Socket;
  readonly #delayMs: number;
  readonly #held: Buffer[] = [];
  #reset = false;
  #ended = false;

  constructor(from: Socket, to: Socket, delayMs: number, isCut: (chunk?: Buffer) => boolean) {
    this.#from = from;
    this.#to = to;
    this.#delayMs = delayMs;
    from.on('data', (chunk: Buffer) => {
      if (isCut(chunk)) this.#held.push(chunk);
      else this.#send(chunk);
    });
    from.on('end', () => {
      this.#ended = true;
      if (!isCut()) this.#later(() => to.end());
    });
    from.on('error', () => {
      this.#reset = true;
      if (!isCut()) to.resetAndDestroy();
    });
  }

  heal(late: boolean): void {
    const held = this.#held.splice(0);
    if (this.#reset && !late) {
      this.#to.resetAndDestroy();
      return;
    }
    for (const chunk of held) this.#send(chunk);
    if (this.#reset || this.#ended) this.#later(() => this.#to.end());
  }

  #send(chunk: Buffer): void {
    this.#later(() => {
      if (!this.#to.destroyed) this.#to.write(chunk);
    });
  }

  #later(act: () => void): void {
    if (this.#delayMs === 0) act();
    else setTimeout(act, this.#delayMs);
  }

  destroy(): void {
    this.#from.destroy();
  }
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

/** `listen` defaults to a free loopback port. */
export async function startSilentRelay(target: Address, delayMs = 0, listen: Address = { host: '127.0.0.1', port: 0 }): Promise<SilentRelay> {
  let isCut = false;
  let cutOn: string | undefined;
  const fromClient = (chunk?: Buffer): boolean => {
    if (cutOn !== undefined && chunk?.includes(cutOn) === true) {
      cutOn = undefined;
      isCut = true;
    }
    return isCut;
  };
  const directions = new Set<Direction>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const both = [new Direction(client, upstream, delayMs, fromClient), new Direction(upstream, client, delayMs, () => isCut)];
    for (const d of both) directions.add(d);
    // Kept until both ends are gone: a side closed during a cut still has bytes to hand on at the heal.
    let open = 2;
    const closed = (): void => {
      if (--open === 0) for (const d of both) directions.delete(d);
    };
    client.on('close', closed);
    upstream.on('close', closed);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  return {
    url: `redis://${listen.host}:${address.port}`,
    cut(options = {}) {
      if (options.onText === undefined) isCut = true;
      else cutOn = options.onText;
    },
    heal(options = {}) {
      isCut = false;
      cutOn = undefined;
      for (const d of [...directions]) d.heal(options.late ?? false);
    },
    async close() {
      for (const d of directions) d.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}
