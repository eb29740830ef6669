/** The catalog API's resources, as both the origin and the gateway speak them (docs/openapi.json). */

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
