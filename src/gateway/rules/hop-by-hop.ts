/**
 * Connection-specific fields (RFC 9110 §7.6.1): an intermediary never forwards, stores or relays
 * them, nor any field the message's `Connection` names. The `Proxy-` authentication fields belong
 * to the next hop alone (§11.7), and RFC 9111 §3.1 forbids storing them.
 */
import { fieldNames, type HeaderFields } from './cache-control.ts';

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authentication-info',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The end-to-end fields of a message as a flat `[name, value, …]` list, less any in `drop`. */
export function endToEndFields(headers: HeaderFields, drop: readonly string[] = []): string[] {
  const named = fieldNames(headers.connection);
  // RFC 9113 §8.3: an HTTP/2 request's pseudo-header fields (`:method`, `:path`…) are not fields.
  const dropped = (name: string): boolean => HOP_BY_HOP.has(name) || name.startsWith(':') || named.includes(name) || drop.includes(name);
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || dropped(name)) continue;
    if (typeof value === 'string') flat.push(name, value);
    else for (const one of value) flat.push(name, one);
  }
  return flat;
}
