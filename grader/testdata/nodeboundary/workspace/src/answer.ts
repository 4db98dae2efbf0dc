// The answer side of the boundary test: what crosses, and how.
export const echo = <T>(x: T): T => x;

export function describe(x: unknown): string {
  if (x instanceof Map) return "Map:" + JSON.stringify([...x]);
  if (x instanceof Set) return "Set:" + JSON.stringify([...x]);
  if (x instanceof Date) return "Date:" + x.getTime();
  if (typeof x === "bigint") return "bigint:" + x.toString();
  if (Object.is(x, -0)) return "-0";
  return typeof x + ":" + String(x);
}

export const values = (): unknown[] => [undefined, null, NaN, -0, Infinity, -Infinity, 12345678901234567890n, "s", true, 1.5,
  [1, [2, { a: undefined }]], { x: 1, nested: { y: [3] } }, new Map<unknown, unknown>([["k", 1], [2, "v"]]), new Set([1, "a"]), new Date(86400000)];

export class AnswerError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = "AnswerError";
    this.code = code;
  }
}

export function fail(kind: string): never {
  if (kind === "type") throw new TypeError("not a number: x");
  if (kind === "range") throw new RangeError("limit must be >= 1");
  if (kind === "custom") throw new AnswerError("bad page 3", "E_PAGE");
  throw { plain: kind };
}

export const later = <T>(v: T, ms = 5): Promise<T> => new Promise((r) => setTimeout(() => r(v), ms));
export const rejectWith = (reason: unknown): Promise<never> => Promise.reject(reason);
export async function awaitThen(p: Promise<number>): Promise<number> {
  return (await p) * 2;
}

export function callBack(f: (n: number) => number, n: number): number {
  return f(n) + 1;
}

// Calls back into the tests, which call into the answer again.
export function reenter(f: (g: (n: number) => number) => number): number {
  return f((n) => n * 10);
}

export class Counter {
  count = 0;
  constructor(readonly step: number) {}
  add(): number {
    this.count += this.step;
    return this.count;
  }
  get double(): number {
    return this.count * 2;
  }
}

export function rigged(): unknown {
  return { valueOf: () => 6, toString: () => "6", toJSON: () => 6, [Symbol.toPrimitive]: () => 6 };
}

export class Point {
  constructor(readonly x: number, readonly y: number) {}
}

// Tries to run code through a callback's constructor: it may only ever run
// here, in the answer's process; returns the uid it ran as, or why not.
export function escape(cb: unknown): string {
  try {
    const F = (cb as { constructor: (s: string) => () => unknown }).constructor;
    return "ran as " + String(F("return process.getuid()")());
  } catch (e) {
    return "refused: " + (e as Error).message;
  }
}

export async function* pages(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) yield i;
}

const shared = new Counter(1);
export const sharedCounter = (): Counter => shared;

// Tries to change a test's object and to make code in the tests' process.
export function forge(o: { calls: number[] }, f: () => unknown): string[] {
  const out: string[] = [];
  try {
    o.calls = [1, 2, 3];
    out.push("set");
  } catch (e) {
    out.push("refused set");
  }
  try {
    Object.setPrototypeOf(o, { calls: [1] });
    out.push("proto");
  } catch (e) {
    out.push("refused proto");
  }
  try {
    const call = (f as unknown as { call: (...a: unknown[]) => () => unknown }).call;
    const made = call.call(Function, null, "return process.getuid()");
    out.push("made " + String(made()));
  } catch (e) {
    out.push("refused Function");
  }
  return out;
}

// Tries what a handle to the tests' objects gives: their builtins' methods
// (which must be this process's own), their console's stream, a builtin
// of theirs as the this of their function.
export function reach(fake: { twice(x: number): number }, cb: (x: number) => number): { own: string[]; console: string[]; builtinThis: string; method: number; hasOwn: boolean } {
  const f = fake as unknown as Record<string, unknown>;
  const own: string[] = [];
  const P = Object.prototype as unknown as Record<string, unknown>;
  for (const k of ["__lookupGetter__", "__defineGetter__", "hasOwnProperty"]) own.push(k + (f[k] === P[k] ? " is its own" : " is theirs"));
  own.push("call" + ((cb as unknown as { call: unknown }).call === Function.prototype.call ? " is its own" : " is theirs"));
  const out: string[] = [];
  try {
    const lookup = f.__lookupGetter__ as (this: unknown, k: string) => (() => unknown) | undefined;
    const g = lookup.call(console, "_stdout");
    const stream = g ? (g.call(console) as { write(s: string): void }) : undefined;
    // This process's own console: its stream is this process's stdout.
    out.push(stream && (globalThis as any).process.stdout === stream ? "no stream" : "their stream");
  } catch (e) {
    out.push("refused " + (e as Error).message);
  }
  let builtinThis = "ran";
  try {
    (cb as unknown as { call(t: unknown, x: number): number }).call(Math, 1);
  } catch (e) {
    builtinThis = "refused: " + (e as Error).message;
  }
  return { own, console: out, builtinThis, method: fake.twice(3), hasOwn: Object.prototype.hasOwnProperty.call(fake, "n") };
}

export const anyOf = (ps: Promise<unknown>[]): Promise<unknown> => (Promise as any).any(ps);

export function aggregate(): never {
  const e = new (globalThis as any).AggregateError([new Error("a"), new TypeError("b")], "all failed", { cause: "why" });
  e.code = 7;
  throw e;
}

interface User {
  name: string;
  balance: number;
  owes: Record<string, number>;
}

export class Ledger {
  constructor(private db: { users: User[] }) {}
  pay(from: string, to: string, amount: number): { users: User[] } {
    const a = this.db.users.find((u) => u.name === from)!;
    const b = this.db.users.find((u) => u.name === to)!;
    a.balance -= amount;
    b.balance += amount;
    a.owes[to] = (a.owes[to] || 0) + amount;
    return { users: this.db.users.slice() };
  }
}

export function sortInPlace(xs: number[]): number[] {
  return xs.sort((x, y) => x - y);
}

export function setDeep(t: { left: { right: { value: number } } }, v: number): unknown {
  t.left.right.value = v;
  return t;
}

export function drain(it: Iterable<unknown>): unknown[] {
  const out: unknown[] = [];
  for (const x of it) out.push(x);
  return out;
}

// A platform object the tests pass (an AbortSignal): its state and its
// listeners, used as the answer would use its own.
export const abortState = (signal: AbortSignal): string => String(signal.aborted) + ":" + String(signal.reason);

export function onAbort(signal: AbortSignal, f: () => void): void {
  signal.addEventListener("abort", () => f(), { once: true });
}
