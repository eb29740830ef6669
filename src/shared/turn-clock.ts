/**
 * The wall clock read once for a run of work instead of on every call, as nginx reads it once per
 * turn of its event loop (`ngx_time_update`). A cache hit asked the time four times (the token's
 * expiry, the entry's freshness, its `Age`, the access line's time stamp), each a call into V8's
 * runtime and the kernel's clock of about 35 ns; the requests served together at the end of a
 * turn (gateway/end-of-turn.ts) now share one reading. A run lasts at most the turn's work, a
 * few milliseconds under load, which is as stale as nginx's clock gets and finer than `Age`'s
 * seconds. Outside a run the clock is read as before.
 */

let held: number | undefined;

/** Milliseconds since the epoch: the time held for the run in progress, or the clock's own. */
export function wallClock(): number {
  return held ?? Date.now();
}

/** Runs `work` with the wall clock read once for all of it (once for the outermost run, when nested). */
export function withHeldClock(work: () => void): void {
  const outer = held;
  held = outer ?? Date.now();
  try {
    work();
  } finally {
    held = outer;
  }
}
