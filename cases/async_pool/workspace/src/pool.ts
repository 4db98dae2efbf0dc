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
 * resolves with the results.
 */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: Task<T, R>): Promise<R[]> {
  const results: R[] = [];
  const executing: Promise<void>[] = [];

  for (const [index, item] of items.entries()) {
    const running = fn(item, index).then((value) => {
      results.push(value);
    });
    executing.push(running);

    if (executing.length >= limit) {
      // Wait for a free slot before starting the next item.
      await Promise.race(executing);
    }
  }

  await Promise.all(executing);
  return results;
}
