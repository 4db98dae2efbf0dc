import type { Page, PageSource, PaginateOptions } from "./types";

export type { Page, PageSource, PaginateOptions } from "./types";

/**
 * Iterates over every item of a cursor-paginated source, fetching pages
 * lazily as the consumer asks for more items.
 *
 * TODO: options.key and options.signal are accepted but not implemented yet.
 */
export async function* paginate<T>(
  source: PageSource<T>,
  options: PaginateOptions<T> = {},
): AsyncGenerator<T, void, undefined> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await source.fetchPage(cursor);
    for (const item of page.items) {
      yield item;
    }
    cursor = page.nextCursor;
  } while (cursor);
}
