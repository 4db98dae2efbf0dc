import { paginate } from "./paginate";
import type { Page, PageSource, PaginateOptions } from "./types";

/** Performs a GET and returns the decoded JSON body. */
export type FetchJson = (url: string, signal?: AbortSignal) => Promise<unknown>;

/** Body shape of our list endpoints: `{"data": [...], "next_cursor": "..." | null}`. */
interface ListBody<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * A PageSource over one list endpoint. The first page is `baseUrl`; later
 * pages are `baseUrl?cursor=<cursor>` (URL-encoded). The body is passed
 * through as-is: checking it is paginate's job.
 */
export class JsonPageSource<T> implements PageSource<T> {
  constructor(private readonly fetchJson: FetchJson, private readonly baseUrl: string) {}

  async fetchPage(cursor: string | null, signal?: AbortSignal): Promise<Page<T>> {
    const url = cursor === null ? this.baseUrl : `${this.baseUrl}?cursor=${encodeURIComponent(cursor)}`;
    const body = (await this.fetchJson(url, signal)) as ListBody<T>;
    return { items: body.data, nextCursor: body.next_cursor };
  }
}

/** Collects every item of `source` into an array. */
export async function collectAll<T>(source: PageSource<T>, options: PaginateOptions<T> = {}): Promise<T[]> {
  const out: T[] = [];
  for await (const item of paginate(source, options)) {
    out.push(item);
  }
  return out;
}
