/** One page of results as returned by a paginated endpoint. */
export interface Page<T> {
  items: T[];
  /** Cursor of the next page, or null on the last page. */
  nextCursor: string | null;
}

/** Anything that can fetch one page for a cursor (null = first page). */
export interface PageSource<T> {
  fetchPage(cursor: string | null, signal?: AbortSignal): Promise<Page<T>>;
}

export interface PaginateOptions<T> {
  /** Cancels the iteration. */
  signal?: AbortSignal;
  /** Identity of an item, used to drop duplicates that show up on several pages. */
  key?: (item: T) => unknown;
}
