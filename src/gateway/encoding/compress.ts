/**
 * Compression: which answers are worth compressing (the rule, a pure function of the head and
 * the body's length), and the codec that encodes and decodes bodies in Node's zlib with the
 * configured levels. The gateway compresses an answer once, when it is filled; the origin
 * compresses what it sends by the same rule.
 */
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import type { Config } from '../../config/schema.ts';
import { parseCacheControl, single, type HeaderFields } from '../rules/cache-control.ts';
import { codingOf, offeredList, type Coding } from './negotiate.ts';

export type Compression = Exclude<Coding, 'identity'>;

/** `gateway.compression.*`. */
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

/**
 * How an answer is kept and in which codings it may be sent: `keep` is the coding of the body
 * kept (undefined: one the gateway cannot decode, kept and sent as it came); `offered` the codings
 * it may be sent in, in the server's order of preference, each made from the kept body when
 * first asked for; empty when it is sent only as kept, with no negotiation and no `Vary` added.
 */
export interface EncodingPlan {
  readonly keep: Coding | undefined;
  readonly offered: readonly Coding[];
}

const NONE = offeredList([]);
const AS_IDENTITY: EncodingPlan = { keep: 'identity', offered: NONE };
const AS_CAME: EncodingPlan = { keep: undefined, offered: NONE };

/**
 * The plan for an origin answer on a route that compresses (`compress`) or not. A 200 of a listed
 * type, of at least `minBytes` and not encoded, is compressed once, in the first configured
 * coding. An answer the origin encoded is kept as it came (never compressed twice) and may be
 * sent decoded. `no-transform` forbids both (RFC 9110 §7.7: an intermediary must not change the
 * content of such an answer).
 */
export function encodingPlan(status: number, headers: HeaderFields, bodyLength: number, policy: CompressionPolicy, compress: boolean): EncodingPlan {
  const sent = codingOf(single(headers['content-encoding']));
  if (sent === undefined) return AS_CAME;
  if (bodyLength === 0 || parseCacheControl(headers['cache-control']).has('no-transform')) return sent === 'identity' ? AS_IDENTITY : { keep: sent, offered: NONE };
  const first = policy.encodings[0];
  const listed = compress && first !== undefined && status === 200 && typeListed(single(headers['content-type']), policy.types);
  if (sent === 'identity') return listed && bodyLength >= policy.minBytes ? { keep: first, offered: offeredList([...policy.encodings, 'identity']) } : AS_IDENTITY;
  return { keep: sent, offered: offeredList(listed ? [...new Set<Coding>([...policy.encodings, sent, 'identity'])] : [sent, 'identity']) };
}

/** Encodes and decodes bodies; synchronous, since a body is small and a stream per body costs more. */
export class Codec {
  readonly #levels: Readonly<Record<Compression, number>>;

  constructor(levels: Readonly<Record<Compression, number>>) {
    this.#levels = levels;
  }

  encode(body: Buffer, coding: Coding): Buffer {
    switch (coding) {
      case 'identity':
        return body;
      case 'gzip':
        return gzipSync(body, { level: this.#levels.gzip });
      case 'br':
        return brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: this.#levels.br, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
      case 'zstd':
        return zstdCompressSync(body, { params: { [constants.ZSTD_c_compressionLevel]: this.#levels.zstd } });
    }
  }

  decode(body: Buffer, coding: Coding): Buffer {
    switch (coding) {
      case 'identity':
        return body;
      case 'gzip':
        return gunzipSync(body);
      case 'br':
        return brotliDecompressSync(body);
      case 'zstd':
        return zstdDecompressSync(body);
    }
  }
}
