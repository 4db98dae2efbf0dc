/**
 * Bounded-concurrency helpers.
 *
 * mapPool runs an async function over a list of items with at most `limit`
 * calls in flight at once — e.g. to fetch 500 URLs without opening 500
 * sockets. See CONTRACT.md for the exact behaviour.
 */

export type Task<T, R> = (item: T, index: number) => Promise<R>;

/**
 * Calls `fn` for every item, keeping at most `limit` calls in flight, and
 * resolves with the results in input order.
 */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: Task<T, R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;

  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index], index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };

  const workers = Array.from({ length: Math.min(limit, items.length) }, () => worker());
  await Promise.all(workers);
  return results;
}
