/**
 * What an availability event means to the cache, whichever way it came (a webhook delivery, or a
 * replay of the origin's event log): a change of (book, branch) concerns the tags `bk_<id>`,
 * `avail_<branch>` and `avail_any` (contract, "Tags").
 */
import { BOOK_ID, BRANCH_ID } from '../../shared/api-types.ts';
import type { PurgeSelector } from '../purge/purge-log.ts';

export const AVAILABILITY_CHANGED = 'book.availability.changed';

export interface AvailabilityChanged {
  readonly timestamp: string;
  readonly data: { readonly book: string; readonly branch: string; readonly available: boolean };
}

export function isAvailabilityChanged(event: unknown): event is AvailabilityChanged {
  if (typeof event !== 'object' || event === null) return false;
  const { type, timestamp, data } = event as Record<string, unknown>;
  if (type !== AVAILABILITY_CHANGED || typeof timestamp !== 'string' || typeof data !== 'object' || data === null) return false;
  const { book, branch, available } = data as Record<string, unknown>;
  return typeof book === 'string' && BOOK_ID.test(book) && typeof branch === 'string' && BRANCH_ID.test(branch) && typeof available === 'boolean';
}

/** The entries a change may have made wrong: those showing the book, and the searches filtered by availability there or anywhere. */
export function availabilitySelector(event: AvailabilityChanged): PurgeSelector {
  const { book, branch } = event.data;
  return { kind: 'tags', tags: [book, `avail_${branch}`, 'avail_any'] };
}
