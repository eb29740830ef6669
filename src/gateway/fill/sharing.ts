/**
 * Who a flight's answer may serve besides the request that caused it (RFC 9111 §4: a collapsed
 * request may reuse only what could have been stored for it). Decided once, from the origin's
 * response head or, when there was none, from the outcome; a waiter only matches its own request
 * against it.
 */
import type { HeaderFields } from '../rules/cache-control.ts';
import { varyMatches } from '../rules/vary.ts';
import type { SecondaryKey } from '../store/stored-response.ts';
import type { FillOutcome } from './fetch.ts';

export type Sharing =
  /** Nobody: waiters ask on their own (Varnish's hit-for-miss). */
  | { readonly kind: 'none' }
  /** Everybody: a failure, or an answer that does not vary. */
  | { readonly kind: 'any' }
  /** The requests that select this secondary key (§4.1). */
  | { readonly kind: 'selected'; readonly key: SecondaryKey };

export const NONE: Sharing = { kind: 'none' };
export const ANY: Sharing = { kind: 'any' };

export function selectedBy(key: SecondaryKey): Sharing {
  return key.vary.length === 0 ? ANY : { kind: 'selected', key };
}

/** For an outcome no response head decided (a failure before the head, an entry from the shared tier). */
export function sharingOfOutcome(outcome: FillOutcome): Sharing {
  return outcome.kind === 'failed' ? ANY : selectedBy(outcome.response);
}

export function admits(sharing: Sharing, request: HeaderFields): boolean {
  switch (sharing.kind) {
    case 'none':
      return false;
    case 'any':
      return true;
    case 'selected':
      return varyMatches(sharing.key.vary, sharing.key.selecting, request);
  }
}
