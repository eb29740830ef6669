/**
 * Which answers are worth compressing (`gateway.compression.*`), as pure functions of the status,
 * the media type and the body's length. The gateway compresses by it at fill, and the origin
 * compresses what it sends by the same rule.
 */
import type { Config } from '../../config/schema.ts';
import type { Compression } from './codec.ts';

export interface CompressionPolicy {
  /** Codings sent to clients that accept them, in the server's order of preference; empty: none. */
  readonly encodings: readonly Compression[];
  /** Smallest body worth compressing: below it the coding's framing eats the gain. */
  readonly minBytes: number;
  /** Media types (`type/subtype`, or `type/*`) that compress; others are sent as they are. */
  readonly types: readonly string[];
  readonly levels: Readonly<Record<Compression, number>>;
}

export function compressionPolicy(config: Config): CompressionPolicy {
  return {
    encodings: config['gateway.compression.encodings'],
    minBytes: config['gateway.compression.minBytes'],
    types: config['gateway.compression.types'].map((type) => type.toLowerCase()),
    levels: { gzip: config['gateway.compression.levels.gzip'], br: config['gateway.compression.levels.br'], zstd: config['gateway.compression.levels.zstd'] },
  };
}

function typeListed(contentType: string | undefined, types: readonly string[]): boolean {
  if (contentType === undefined) return false;
  const type = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  const slash = type.indexOf('/');
  return types.includes(type) || (slash !== -1 && types.includes(`${type.slice(0, slash)}/*`));
}

/** Whether a coding is configured and this is a 200 of a listed type: it may be sent in the configured codings. */
export function compressible(status: number, contentType: string | undefined, policy: CompressionPolicy): boolean {
  return policy.encodings.length > 0 && status === 200 && typeListed(contentType, policy.types);
}

/** Whether an identity body is worth compressing: compressible, and not so small that the framing eats the gain. */
export function worthCompressing(status: number, contentType: string | undefined, bodyLength: number, policy: CompressionPolicy): boolean {
  return bodyLength >= policy.minBytes && compressible(status, contentType, policy);
}
