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
 * Settles like `promise`, unless `signal` aborts first: then it rejects with
 * `signal.reason` at once, without waiting for `promise`.
 */
function untilAborted<V>(promise: Promise<V>, signal: AbortSignal | undefined): Promise<V> {
  if (!signal) return promise;
  return new Promise<V>((resolve, reject) => {
    if (signal.aborted) {
      promise.catch(() => undefined);
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
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
  const seenKeys = new Set<unknown>();
  let cursor: string | null = null;
  let pageNumber = 0;

  for (;;) {
    throwIfAborted(signal);
    pageNumber++;
    const raw: unknown = await untilAborted(source.fetchPage(cursor, signal), signal);
    throwIfAborted(signal);
    const page = checkPage<T>(raw, pageNumber);
    if (page.nextCursor !== null && page.nextCursor === cursor) {
      throw new PaginationError(
        "CURSOR_LOOP",
        pageNumber,
        `nextCursor ${JSON.stringify(page.nextCursor)} points back at this page (cursor loop)`,
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
