/**
 * How a filled answer is kept and in which codings it may be sent: the gateway's side of
 * compression, which also has to deal with what the origin sent (an encoded body, `no-transform`).
 * A pure function of the head and the body's length; the rule of what is worth compressing is
 * shared with the origin (src/shared/encoding/policy.ts).
 */
import { codingOf, offeredList, type Coding } from '../../shared/encoding/negotiate.ts';
import { compressible, worthCompressing, type CompressionPolicy } from '../../shared/encoding/policy.ts';
import { parseCacheControl, single, type HeaderFields } from '../rules/cache-control.ts';

/**
 * `keep` is the coding of the body kept (undefined: one the gateway cannot decode, kept and sent
 * as it came); `offered` the codings it may be sent in, in the server's order of preference, each
 * made from the kept body when first asked for; empty when it is sent only as kept, with no
 * negotiation and no `Vary` added.
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
  if (bodyLength === 0 || parseCacheControl(headers['cache-control']).has('no-transform'))
    return sent === 'identity' ? AS_IDENTITY : { keep: sent, offered: NONE };
  const contentType = single(headers['content-type']);
  if (sent === 'identity') {
    const [first] = policy.encodings;
    return compress && first !== undefined && worthCompressing(status, contentType, bodyLength, policy)
      ? { keep: first, offered: offeredList([...policy.encodings, 'identity']) }
      : AS_IDENTITY;
  }
  const listed = compress && compressible(status, contentType, policy);
  return { keep: sent, offered: offeredList(listed ? [...new Set<Coding>([...policy.encodings, sent, 'identity'])] : [sent, 'identity']) };
}
