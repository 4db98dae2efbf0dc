// Test helpers for the frozen async_pool checks (not a test file itself).

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending microtask (promise callback) run, via one macrotask. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Watches a promise without ever leaving its rejection unhandled. */
export interface Watched<T> {
  state: "pending" | "fulfilled" | "rejected";
  value?: T;
  reason?: unknown;
}

export function watch<T>(promise: Promise<T>): Watched<T> {
  const w: Watched<T> = { state: "pending" };
  promise.then(
    (value) => {
      w.state = "fulfilled";
      w.value = value;
    },
    (reason) => {
      w.state = "rejected";
      w.reason = reason;
    },
  );
  return w;
}

/** Rejects if `promise` has not settled within `ms` (guards against hangs). */
export function withTimeout<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  const guarded = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (reason) => {
        clearTimeout(timer);
        reject(reason);
      },
    );
  });
  // A test that fails before awaiting the guard must not leak a rejection.
  guarded.catch(() => undefined);
  return guarded;
}

export interface Call<R> {
  item: unknown;
  index: number;
  settled: boolean;
  deferred: Deferred<R>;
}

/**
 * A task function whose calls stay in flight until the test settles them.
 * It counts how many calls are in flight and the most there ever were.
 */
export class Controlled<R> {
  readonly calls: Call<R>[] = [];
  active = 0;
  maxActive = 0;

  readonly fn = (item: unknown, index: number): Promise<R> => {
    const d = deferred<R>();
    this.calls.push({ item, index, settled: false, deferred: d });
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    return d.promise;
  };

  get started(): number[] {
    return this.calls.map((c) => c.index);
  }

  private call(index: number): Call<R> {
    const c = this.calls.find((x) => x.index === index);
    if (!c) throw new Error(`item ${index} was never started`);
    if (c.settled) throw new Error(`item ${index} already settled`);
    c.settled = true;
    this.active--;
    return c;
  }

  resolve(index: number, value: R): void {
    this.call(index).deferred.resolve(value);
  }

  reject(index: number, reason: unknown): void {
    this.call(index).deferred.reject(reason);
  }
}
