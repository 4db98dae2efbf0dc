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

    const fail = (err: unknown): void => {
      // Only the first rejection counts; later ones are swallowed here.
      if (failed) return;
      failed = true;
      reject(err);
    };

    const startOne = (): void => {
      const index = next++;
      let pending: Promise<R>;
      try {
        pending = Promise.resolve(fn(items[index], index));
      } catch (err) {
        fail(err);
        return;
      }
      pending.then((value) => {
        results[index] = value;
        finished++;
        if (failed) return;
        if (finished === total) resolve(results);
        else if (next < total) startOne();
      }, fail);
    };

    if (total === 0) {
      resolve(results);
      return;
    }
    while (!failed && next < total && next < limit) startOne();
  });
}

/** Rejection of `Pool.run` once the pool has been closed. */
export class PoolClosedError extends Error {
  constructor(message = "pool is closed") {
    super(message);
    this.name = "PoolClosedError";
  }
}

/**
 * A long-lived pool: tasks are submitted one by one with `run`, at most
 * `limit` of them run at once, and `close()` stops intake and waits for the
 * accepted work to drain.
 */
export class Pool {
  private readonly limit: number;
  private running = 0;
  private queue: Array<{ start: () => void; refuse: () => void }> = [];
  private isClosed = false;
  private drainWaiters: Array<() => void> = [];

  constructor(limit: number) {
    const bad = invalidLimit(limit);
    if (bad) throw bad;
    this.limit = limit;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  run<R>(task: () => Promise<R>): Promise<R> {
    if (this.isClosed) return Promise.reject(new PoolClosedError());
    return new Promise<R>((resolve, reject) => {
      const refuse = (): void => reject(new PoolClosedError());
      const start = (): void => {
        this.running++;
        let pending: Promise<R>;
        try {
          pending = Promise.resolve(task());
        } catch (err) {
          pending = Promise.reject(err);
        }
        pending.then(resolve, reject).then(() => {
          this.running--;
          this.pump();
        });
      };
      if (this.running < this.limit) start();
      else this.queue.push({ start, refuse });
    });
  }

  close(): Promise<void> {
    this.isClosed = true;
    // Stop intake: work that has not started yet is refused as well.
    const dropped = this.queue;
    this.queue = [];
    for (const job of dropped) job.refuse();
    if (this.idle()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.drainWaiters.push(resolve);
    });
  }

  private idle(): boolean {
    return this.running === 0 && this.queue.length === 0;
  }

  private pump(): void {
    while (this.running < this.limit && this.queue.length > 0) {
      const job = this.queue.shift() as { start: () => void };
      job.start();
    }
    if (this.idle() && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
