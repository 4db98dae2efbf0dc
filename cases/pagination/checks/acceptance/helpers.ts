// Test helpers for the frozen pagination checks (not a test file itself).
import * as assert from "node:assert/strict";
import type { Page, PageSource } from "../../workspace/src/types";

export interface Call {
  cursor: string | null;
  signal: AbortSignal | undefined;
}

/**
 * A source answering from a fixed table: cursor -> page (key "" stands for
 * the first page, cursor null). Pages are handed out as given, malformed or
 * not. It refuses to answer more than `maxCalls` times so a paginator that
 * never stops fails instead of spinning forever.
 */
export class ScriptedSource<T> implements PageSource<T> {
  readonly calls: Call[] = [];

  constructor(private readonly table: Record<string, unknown>, private readonly maxCalls = 40) {}

  fetchPage(cursor: string | null, signal?: AbortSignal): Promise<Page<T>> {
    this.calls.push({ cursor, signal });
    if (this.calls.length > this.maxCalls) {
      return Promise.reject(new Error(`runaway pagination: more than ${this.maxCalls} fetchPage calls`));
    }
    const k = cursor === null ? "" : cursor;
    if (!Object.prototype.hasOwnProperty.call(this.table, k)) {
      return Promise.reject(new Error(`test source has no page for cursor ${JSON.stringify(cursor)}`));
    }
    return Promise.resolve(this.table[k] as Page<T>);
  }

  get cursors(): Array<string | null> {
    return this.calls.map((c) => c.cursor);
  }
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
  guarded.catch(() => undefined);
  return guarded;
}

export interface Drained<T> {
  items: T[];
  done: boolean;
  error?: unknown;
}

/** Pulls items until the iterator ends or rejects (never rejects itself). */
export async function drain<T>(it: AsyncIterator<T>, max = 200): Promise<Drained<T>> {
  const items: T[] = [];
  try {
    while (items.length < max) {
      const r = await withTimeout(it.next());
      if (r.done) return { items, done: true };
      items.push(r.value);
    }
    return { items, done: false, error: new Error(`still yielding after ${max} items`) };
  } catch (error) {
    return { items, done: false, error };
  }
}

/** Lets every pending promise callback run, via one macrotask. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

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

/** Checks that `error` is the PaginationError the contract describes. */
export function assertPaginationError(
  ErrorClass: new (...args: any[]) => Error,
  error: unknown,
  code: string,
  page: number,
): void {
  assert.ok(error instanceof ErrorClass, `expected a PaginationError, got ${String(error)}`);
  const e = error as Error & { code?: unknown; page?: unknown };
  assert.ok(e instanceof Error);
  assert.strictEqual(e.name, "PaginationError");
  assert.strictEqual(e.code, code);
  assert.strictEqual(e.page, page);
  assert.match(e.message, new RegExp(`page ${page}\\b`, "i"));
}
