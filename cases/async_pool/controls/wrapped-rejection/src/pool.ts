/**
 * Bounded-concurrency helpers.
 *
 * mapPool runs an async function over a list of items with at most `limit`
 * calls in flight at once — e.g. to fetch 500 URLs without opening 500
 * sockets. See CONTRACT.md for the exact behaviour.
 */

export type Task<T, R> = (item: T, index: number) => Promise<R>;

function invalidLimit(limit: number): RangeError | undefined {
  if (Number.isInteger(limit) && limit >= 1) return undefined;
  return new RangeError(`limit must be an integer >= 1, got ${String(limit)}`);
}

/**
 * Calls `fn` for every item, keeping at most `limit` calls in flight, and
 * resolves with the results in input order.
 */
export function mapPool<T, R>(items: readonly T[], limit: number, fn: Task<T, R>): Promise<R[]> {
  const bad = invalidLimit(limit);
  if (bad) return Promise.reject(bad);

  return new Promise<R[]>((resolve, reject) => {
    const total = items.length;
    const results: R[] = new Array(total);
    let next = 0;
    let finished = 0;
    let failed = false;

    const fail = (err: unknown, index: number): void => {
      // Only the first rejection counts; later ones are swallowed here.
      if (failed) return;
      failed = true;
      const detail = err instanceof Error ? err.message : String(err);
      reject(new Error(`mapPool: item ${index} failed: ${detail}`));
    };

    const startOne = (): void => {
      const index = next++;
      let pending: Promise<R>;
      try {
        pending = Promise.resolve(fn(items[index], index));
      } catch (err) {
        fail(err, index);
        return;
      }
      pending.then((value) => {
        results[index] = value;
        finished++;
        if (failed) return;
        if (finished === total) resolve(results);
        else if (next < total) startOne();
      }, (err) => fail(err, index));
    };

    if (total === 0) {
      resolve(results);
      return;
    }
    while (!failed && next < total && next < limit) startOne();
  });
}
