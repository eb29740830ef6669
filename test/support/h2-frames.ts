/**
 * HTTP/2 spoken frame by frame over a plain socket (RFC 9113 §4), for the requests node:http2's
 * client refuses to send: field values with CR, LF or NUL, a stream that depends on itself, a
 * broken connection preface. Header blocks are HPACK literals without indexing or Huffman coding
 * (RFC 7541 §6.2.2), which every decoder takes; frames coming back are parsed far enough to tell
 * what the server did to each stream (HEADERS, RST_STREAM) and to the connection (GOAWAY).
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

export const FRAME = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `prefixBits`-bit prefix (RFC 7541 §5.1), the first octet's high bits `mask`. */
function hpackInteger(value: number, prefixBits: number, mask: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [mask | value];
  const out = [mask | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A header block of literal fields without indexing, names and values as raw octets. */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0x00, ...hpackInteger(n.length, 7, 0)]), n, Buffer.from(hpackInteger(v.length, 7, 0)), v);
  }
  return Buffer.concat(parts);
}

/** A GET's HEADERS frame (END_STREAM, END_HEADERS) with the pseudo-header fields and `extra`. */
export function getRequest(streamId: number, path: string, extra: readonly (readonly [string, string])[] = []): Buffer {
  const fields: (readonly [string, string])[] = [[':method', 'GET'], [':scheme', 'http'], [':authority', 'localhost'], [':path', path], ...extra];
  return frame(FRAME.HEADERS, END_STREAM | END_HEADERS, streamId, headerBlock(fields));
}

export function settings(entries: readonly (readonly [number, number])[] = []): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
}

export function rstStream(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FRAME.RST_STREAM, 0, streamId, payload);
}

/** RFC 9113 §6.3: a PRIORITY frame making `streamId` depend on `dependsOn`. */
export function priority(streamId: number, dependsOn: number): Buffer {
  const payload = Buffer.alloc(5);
  payload.writeUInt32BE(dependsOn & 0x7fffffff);
  payload[4] = 15;
  return frame(FRAME.PRIORITY, 0, streamId, payload);
}

export interface Received {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** A raw HTTP/2 connection: write frames, wait for the server's. */
export class RawH2 {
  readonly socket: Socket;
  readonly frames: Received[] = [];
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  closed = false;
  /** Whether this client sent the preface, so that its acknowledgements do not break one it is yet to send. */
  #prefaced: boolean;

  private constructor(socket: Socket, prefaced: boolean) {
    this.socket = socket;
    this.#prefaced = prefaced;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      while (this.#buffer.length >= 9) {
        const length = this.#buffer.readUIntBE(0, 3);
        if (this.#buffer.length < 9 + length) break;
        const received = {
          type: this.#buffer[3] ?? 0,
          flags: this.#buffer[4] ?? 0,
          streamId: this.#buffer.readUInt32BE(5) & 0x7fffffff,
          payload: this.#buffer.subarray(9, 9 + length),
        };
        this.#buffer = this.#buffer.subarray(9 + length);
        // The server's SETTINGS are acknowledged, as RFC 9113 §6.5.3 requires.
        if (this.#prefaced && received.type === FRAME.SETTINGS && (received.flags & ACK) === 0) socket.write(frame(FRAME.SETTINGS, ACK, 0));
        this.frames.push(received);
      }
      this.#wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  /**
   * Connects to `url` (h2c, or over TLS with ALPN `h2` for `https:`, trusting `ca`) and, unless
   * `preface` is false, sends the preface and empty SETTINGS.
   */
  static async open(url: string, preface = true, ca?: Buffer): Promise<RawH2> {
    const { protocol, hostname, port } = new URL(url);
    const socket =
      protocol === 'https:'
        ? tlsConnect({ host: hostname, port: Number(port), ca, servername: 'localhost', ALPNProtocols: ['h2'] })
        : connect(Number(port), hostname);
    await once(socket, protocol === 'https:' ? 'secureConnect' : 'connect');
    const raw = new RawH2(socket, preface);
    if (preface) socket.write(Buffer.concat([Buffer.from(PREFACE, 'latin1'), settings()]));
    return raw;
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** The first frame (received so far or later) that `match` picks; undefined when the connection closes or `ms` pass first. */
  async next(match: (f: Received) => boolean, ms = 5000): Promise<Received | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.frames.find(match);
      if (found !== undefined || this.closed || Date.now() >= deadline) return found;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** What the server did to `streamId`: `headers` (an answer began) or the RST_STREAM code. */
  async streamOutcome(streamId: number, ms = 5000): Promise<'headers' | number | undefined> {
    const f = await this.next((x) => x.streamId === streamId && (x.type === FRAME.HEADERS || x.type === FRAME.RST_STREAM), ms);
    if (f === undefined) return undefined;
    return f.type === FRAME.HEADERS ? 'headers' : f.payload.readUInt32BE(0);
  }

  /** The error code of the server's GOAWAY, once it comes. */
  async goaway(ms = 5000): Promise<number | undefined> {
    const f = await this.next((x) => x.type === FRAME.GOAWAY, ms);
    return f?.payload.readUInt32BE(4);
  }

  close(): void {
    this.socket.destroy();
  }
}
