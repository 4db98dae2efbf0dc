// An honest answer exercising the language's ordinary semantics, for the
// differential test (grader/nodediff_test.go): graded through the boundary
// and run in the tests' own process, every test must come out the same.
// Some tests fail on purpose (the last function has a bug), in both.

type Callback<T> = (err: unknown, value?: T) => void;

export function promisify<T>(fn: (x: unknown, cb: Callback<T>) => void): (x: unknown) => Promise<T> {
  return (x) => new Promise<T>((resolve, reject) => fn(x, (err, v) => (err ? reject(err) : resolve(v as T))));
}

export function all<T>(ps: Promise<T>[]): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    let left = ps.length;
    if (left === 0) resolve(out);
    ps.forEach((p, i) => p.then((v) => {
      out[i] = v;
      if (--left === 0) resolve(out);
    }, reject));
  });
}

// any rejects with the array of every rejection, in order.
export function any<T>(ps: Promise<T>[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const errs: unknown[] = [];
    let left = ps.length;
    if (left === 0) reject(errs);
    ps.forEach((p, i) => p.then(resolve, (e) => {
      errs[i] = e;
      if (--left === 0) reject(errs);
    }));
  });
}

export const builtinAny = <T>(ps: Promise<T>[]): Promise<T> => Promise.any(ps);
export const settled = <T>(ps: Promise<T>[]) => Promise.allSettled(ps);
export const race = <T>(ps: Promise<T>[]): Promise<T> => Promise.race(ps);

export async function* countdown(n: number, ms = 1): AsyncGenerator<number> {
  for (let i = n; i > 0; i--) {
    await new Promise((r) => setTimeout(r, ms));
    yield i;
  }
}

export function* fib(): Generator<number> {
  let [a, b] = [0, 1];
  for (;;) {
    yield a;
    [a, b] = [b, a + b];
  }
}

export function take<T>(it: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  if (n <= 0) return out;
  for (const x of it) {
    out.push(x);
    if (out.length >= n) break;
  }
  return out;
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export const identity = <T>(x: T): T => x;
export const pair = <T>(x: T): [T, T] => [x, x];

export function callEach(fns: ((n: number) => number)[], n: number): number[] {
  return fns.map((f) => f(n));
}

export interface Listener {
  onEvent(name: string, data: { n: number }): void;
}

export function emit(l: Listener, names: string[]): number {
  names.forEach((name, i) => l.onEvent(name, { n: i }));
  return names.length;
}

export class BalanceError extends Error {
  constructor(readonly needed: number, readonly account: string) {
    super(`account ${account} needs ${needed} more`);
    this.name = "BalanceError";
  }
}

export class Account {
  private cents = 0;
  constructor(readonly name: string) {}
  deposit(n: number): number {
    if (!(n > 0)) throw new RangeError("amount must be positive");
    this.cents += n;
    return this.cents;
  }
  withdraw(n: number): number {
    if (n > this.cents) throw new BalanceError(n - this.cents, this.name);
    this.cents -= n;
    return this.cents;
  }
  get balance(): number {
    return this.cents;
  }
}

export function fail(kind: string): never {
  if (kind === "string") throw "just a string";
  if (kind === "object") throw { code: 42, detail: [1, 2] };
  if (kind === "cause") throw new Error("outer", { cause: new TypeError("inner") });
  throw new Error(kind);
}

export const numbers = () => ({ negZero: -0, nan: NaN, inf: -Infinity, big: Number.MAX_SAFE_INTEGER + 2, tiny: Number.MIN_VALUE, sum: 0.1 + 0.2, huge: 2n ** 70n });
export const half = (x: number): number => x / 2;

export interface Record_ {
  name: string;
  balance: number;
  owes: { [who: string]: number };
}

export class Ledger {
  constructor(private db: { users: Record_[] }) {}
  iou(lender: string, borrower: string, amount: number): { users: Record_[] } {
    const l = this.db.users.find((u) => u.name === lender)!;
    const b = this.db.users.find((u) => u.name === borrower)!;
    l.balance += amount;
    b.balance -= amount;
    b.owes[lender] = (b.owes[lender] || 0) + amount;
    return { users: [l, b].sort((x, y) => x.name.localeCompare(y.name)) };
  }
}

export function sortInPlace(xs: number[]): void {
  xs.sort((a, b) => a - b);
}

export function setLeaf(t: { left?: { value: number; right?: { value: number } } }, v: number): typeof t {
  if (t.left && t.left.right) t.left.right.value = v;
  return t;
}

export function counts(words: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of words) m.set(w, (m.get(w) || 0) + 1);
  return m;
}

// The bug: off by one on an empty list (the tests expect 0).
export const lengthOf = (xs: unknown[]): number => (xs.length === 0 ? 1 : xs.length);
