/**
 * Negotiation as the gateway's hot path needs it: the pure choice (src/shared/encoding/negotiate.ts)
 * remembered, so that a hit does not parse the same `Accept-Encoding` again.
 */
import { BoundedMemo } from '../../shared/bounded-memo.ts';
import { negotiate, type Coding } from '../../shared/encoding/negotiate.ts';

/** Headers a memo keeps per list offered; a field value that never repeats cannot grow it past this. */
const NEGOTIATED_LIMIT = 256;

/**
 * `negotiate` remembered per list offered (offeredList) and `Accept-Encoding` value: clients send
 * a handful of distinct values, and a hit should not parse one each time. One per pipeline.
 */
export class Negotiator {
  readonly #chosen = new WeakMap<readonly Coding[], BoundedMemo<string, Coding>>();

  choose(accept: string | undefined, offered: readonly Coding[]): Coding {
    if (accept === undefined) return negotiate(accept, offered);
    let known = this.#chosen.get(offered);
    if (known === undefined) {
      known = new BoundedMemo(NEGOTIATED_LIMIT);
      this.#chosen.set(offered, known);
    }
    return known.get(accept) ?? known.keep(accept, negotiate(accept, offered));
  }
}
