/**
 * Negotiation as the gateway's hot path needs it: the pure choice (src/shared/encoding/negotiate.ts)
 * remembered, so that a hit does not parse the same `Accept-Encoding` again.
 */
import { negotiate, type Coding } from '../../shared/encoding/negotiate.ts';

/** Headers a memo keeps per list offered; a field value that never repeats cannot grow it past this. */
const NEGOTIATED_LIMIT = 256;

/**
 * `negotiate` remembered per list offered (offeredList) and `Accept-Encoding` value: clients send
 * a handful of distinct values, and a hit should not parse one each time. One per pipeline.
 */
export class Negotiator {
  readonly #chosen = new WeakMap<readonly Coding[], Map<string, Coding>>();

  choose(accept: string | undefined, offered: readonly Coding[]): Coding {
    if (accept === undefined) return negotiate(accept, offered);
    let known = this.#chosen.get(offered);
    if (known === undefined) {
      known = new Map();
      this.#chosen.set(offered, known);
    }
    let coding = known.get(accept);
    if (coding === undefined) {
      coding = negotiate(accept, offered);
      if (known.size >= NEGOTIATED_LIMIT) known.clear();
      known.set(accept, coding);
    }
    return coding;
  }
}
