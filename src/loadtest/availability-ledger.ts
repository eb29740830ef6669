/**
 * The circulation load test's ground truth: for every (book, branch) it changed, the availability
 * the origin committed and when, and the judge of whether a search answer was stale.
 *
 * A change is known to have committed somewhere between the loan request being sent (`sentAt`)
 * and the origin's own answer to a read of the book afterwards (`knownAt`). An answer to a request
 * sent at `ts` and received at `tr` may show, for a pair, the state that was certainly committed
 * `lag` before `ts`, or any state a change within the window could have left. Anything else is a
 * **stale read**: it still shows what a change committed more than `lag` before the request had
 * replaced. The judge leans towards the gateway (it counts a change as committed only once it is
 * known), so a stale read it reports is one for certain.
 */
export interface Change {
  readonly sentAt: number;
  readonly knownAt: number;
  readonly available: boolean;
}

export class AvailabilityLedger {
  readonly #history = new Map<string, { initial: boolean; changes: Change[] }>();

  static key(book: string, branch: string): string {
    return `${book} ${branch}`;
  }

  /** The availability of a pair before the run changed it. */
  watch(book: string, branch: string, available: boolean): void {
    if (!this.#history.has(AvailabilityLedger.key(book, branch))) this.#history.set(AvailabilityLedger.key(book, branch), { initial: available, changes: [] });
  }

  watched(book: string, branch: string): boolean {
    return this.#history.has(AvailabilityLedger.key(book, branch));
  }

  /**
   * Records what the origin showed for a pair after a loan or return (in `knownAt` order); true
   * when it is a change (a flip) and not the availability already known.
   */
  record(book: string, branch: string, change: Change): boolean {
    const history = this.#history.get(AvailabilityLedger.key(book, branch));
    if (history === undefined) return false;
    const last = history.changes.at(-1)?.available ?? history.initial;
    if (last === change.available) return false;
    history.changes.push(change);
    return true;
  }

  /** Whether an answer showing `shown` for the pair, asked at `sentAt` and received at `receivedAt`, is stale beyond `lagMs`. */
  isStale(book: string, branch: string, shown: boolean, sentAt: number, receivedAt: number, lagMs: number): boolean {
    const history = this.#history.get(AvailabilityLedger.key(book, branch));
    if (history === undefined) return false;
    const horizon = sentAt - lagMs;
    let settled = history.initial;
    for (const change of history.changes) {
      if (change.knownAt <= horizon) settled = change.available;
      else if (change.sentAt <= receivedAt && change.available === shown) return false;
    }
    return settled !== shown;
  }
}
