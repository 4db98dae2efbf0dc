import type { Page, PageSource, PaginateOptions } from "./types";

export type { Page, PageSource, PaginateOptions } from "./types";

export type PaginationErrorCode = "MALFORMED_PAGE" | "CURSOR_LOOP";

/** A page broke the pagination protocol. `page` counts from 1. */
export class PaginationError extends Error {
  readonly code: PaginationErrorCode;
  readonly page: number;

  constructor(code: PaginationErrorCode, page: number, detail: string) {
    super(`page ${page}: ${detail}`);
    this.name = "PaginationError";
    this.code = code;
    this.page = page;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value);
  return typeof value;
}

/** Checks the shape of a page; returns it typed, or throws PaginationError. */
function checkPage<T>(raw: unknown, page: number): Page<T> {
  if (typeof raw !== "object" || raw === null) {
    throw new PaginationError("MALFORMED_PAGE", page, `expected a page object, got ${describe(raw)}`);
  }
  const { items, nextCursor } = raw as { items?: unknown; nextCursor?: unknown };
  if (!Array.isArray(items)) {
    throw new PaginationError("MALFORMED_PAGE", page, `items is not an array (got ${describe(items)})`);
  }
  if (nextCursor !== null && (typeof nextCursor !== "string" || nextCursor === "")) {
    throw new PaginationError(
      "MALFORMED_PAGE",
      page,
      `nextCursor must be a non-empty string or null (got ${describe(nextCursor)})`,
    );
  }
  return { items: items as T[], nextCursor };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal && signal.aborted) throw signal.reason;
}

/**
 * Iterates over every item of a cursor-paginated source, fetching pages
 * lazily as the consumer asks for more items. See CONTRACT.md.
 */
export async function* paginate<T>(
  source: PageSource<T>,
  options: PaginateOptions<T> = {},
): AsyncGenerator<T, void, undefined> {
  const { signal, key } = options;
  const requested = new Set<string>();
  const seenKeys = new Set<unknown>();
  let cursor: string | null = null;
  let pageNumber = 0;

  for (;;) {
    throwIfAborted(signal);
    pageNumber++;
    if (cursor !== null) requested.add(cursor);
    const raw: unknown = await source.fetchPage(cursor, signal);
    throwIfAborted(signal);
    const page = checkPage<T>(raw, pageNumber);
    if (page.nextCursor !== null && requested.has(page.nextCursor)) {
      throw new PaginationError(
        "CURSOR_LOOP",
        pageNumber,
        `nextCursor ${JSON.stringify(page.nextCursor)} was already requested (cursor loop)`,
      );
    }

    for (const item of page.items) {
      if (key) {
        const k = key(item);
        if (seenKeys.has(k)) continue;
        seenKeys.add(k);
      }
      yield item;
      throwIfAborted(signal);
    }

    if (page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}
