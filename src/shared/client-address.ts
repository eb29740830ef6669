/**
 * Who the client is. The connection's peer, unless the peer is a proxy the operator trusts
 * (`http.trustedProxies`): then `X-Forwarded-For` is read from the right, skipping trusted hops,
 * and the first untrusted address is the client (nginx's `real_ip_recursive on`). A client
 * cannot name itself: an address in the field counts only behind a trusted peer.
 */
import type { RequestHead } from './message-seam.ts';
import { BlockList, isIP } from 'node:net';

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** `::ffff:10.0.0.1` is 10.0.0.1: a dual-stack listener reports IPv4 peers that way. */
function plain(address: string): string {
  return address.startsWith('::ffff:') || address.startsWith('::FFFF:') ? (MAPPED_V4.exec(address)?.[1] ?? address) : address;
}

/** Why an entry of `http.trustedProxies` is not an address or a CIDR block, or undefined when it is one. */
export function invalidProxyEntry(entry: string): string | undefined {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return `${JSON.stringify(entry)} is not an IP address or CIDR block`;
  if (prefix !== undefined && !(/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)))
    return `${JSON.stringify(entry)} has a bad prefix length`;
  return undefined;
}

export class ClientAddress {
  readonly #trusted: BlockList | undefined;

  /** `entries`: addresses and CIDR blocks, already checked with invalidProxyEntry. */
  constructor(entries: readonly string[]) {
    if (entries.length === 0) return;
    const list = new BlockList();
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) list.addAddress(address, type);
      else list.addSubnet(address, Number(prefix), type);
    }
    this.#trusted = list;
  }

  #isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.#trusted !== undefined && this.#trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** The connection's peer, as an address a person would write. */
  peer(req: RequestHead): string | undefined {
    const address = req.socket.remoteAddress;
    return address === undefined ? undefined : plain(address);
  }

  /** Whether the connection's peer is one of the trusted proxies, whose forwarding fields are believed. */
  trustsPeer(req: RequestHead): boolean {
    const peer = this.peer(req);
    return peer !== undefined && this.#isTrusted(peer);
  }

  /** The client: the peer, or behind trusted proxies the last untrusted `X-Forwarded-For` hop. */
  client(req: RequestHead): string | undefined {
    const peer = this.peer(req);
    if (this.#trusted === undefined || peer === undefined || !this.#isTrusted(peer)) return peer;
    const hops = forwardedFor(req);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain(hops[i] ?? '');
      if (isIP(hop) === 0) return peer;
      if (!this.#isTrusted(hop)) return hop;
    }
    return hops.length === 0 ? peer : plain(hops[0] ?? peer);
  }

  /**
   * The `X-Forwarded-For` to send on: the peer appended to what a trusted peer forwarded
   * (nginx's `$proxy_add_x_forwarded_for`), or the peer alone when the field came from anyone else.
   */
  forwardFor(req: RequestHead): string {
    const peer = this.peer(req) ?? 'unknown';
    if (this.#trusted === undefined || !this.#isTrusted(peer)) return peer;
    const hops = forwardedFor(req);
    return hops.length === 0 ? peer : `${hops.join(', ')}, ${peer}`;
  }
}

function forwardedFor(req: RequestHead): string[] {
  const field = req.headers['x-forwarded-for'];
  if (field === undefined) return [];
  return (typeof field === 'string' ? field : field.join(','))
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '');
}
