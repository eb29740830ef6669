/** The catalog API's resources, as both the origin and the gateway speak them (docs/openapi.json). */

/** A book id: `bk_` and a positive number without leading zeros, so each book has exactly one URL. */
export const BOOK_ID = /^bk_([1-9][0-9]{0,9})$/;
/** A branch id. */
export const BRANCH_ID = /^branch_[a-z0-9_]{1,56}$/;

export interface BranchAvailability {
  /** Matches `^branch_[a-z0-9_]+$`. */
  readonly branch: string;
  /** Whether a copy can be borrowed at this branch now. */
  readonly available: boolean;
}

export interface Book {
  /** Matches `^bk_[0-9]+$`. */
  readonly id: string;
  readonly title: string;
  readonly authors: readonly string[];
  /** Every branch that holds a copy. */
  readonly availability: readonly BranchAvailability[];
}

export interface Branch {
  readonly id: string;
  readonly name: string;
}

export interface BooksPage {
  readonly results: readonly Book[];
  /** Request target of the next page, `null` on the last page; also sent as `Link: <…>; rel="next"`. */
  readonly next: string | null;
}

export interface BranchList {
  readonly results: readonly Branch[];
}
