/**
 * Encodes and decodes bodies in Node's zlib with the configured levels: the gateway compresses an
 * answer once at fill and makes the other codings from it; the origin compresses what it sends.
 */
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import type { Coding } from './negotiate.ts';

export type Compression = Exclude<Coding, 'identity'>;

/** Synchronous, since a body is small and a stream per body costs more. */
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
