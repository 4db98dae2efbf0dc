// What the node boundary keeps: run against workspace/src/answer.ts loaded
// in the answer's host. Every test must pass.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as a from "../workspace/src/answer";

test("plain values cross by value, exactly", () => {
  const vs = a.values();
  assert.deepStrictEqual(vs.slice(0, 10), [undefined, null, NaN, -0, Infinity, -Infinity, 12345678901234567890n, "s", true, 1.5]);
  assert.ok(Object.is(vs[3], -0));
  assert.deepStrictEqual(vs[10], [1, [2, { a: undefined }]]);
  assert.deepStrictEqual(vs[11], { x: 1, nested: { y: [3] } });
  assert.deepStrictEqual(vs[12], new Map<unknown, unknown>([["k", 1], [2, "v"]]));
  assert.deepStrictEqual(vs[13], new Set([1, "a"]));
  assert.deepStrictEqual(vs[14], new Date(86400000));
  assert.equal(a.describe(new Map([["z", 2]])), 'Map:[["z",2]]');
  assert.equal(a.describe(new Set([3])), "Set:[3]");
  assert.equal(a.describe(new Date(5)), "Date:5");
  assert.equal(a.describe(7n), "bigint:7");
  assert.equal(a.describe(-0), "-0");
  assert.equal(a.describe(undefined), "undefined:undefined");
});

test("what the tests pass comes back as itself", () => {
  const o = { k: [1, 2] };
  const err = new Error("mine");
  assert.strictEqual(a.echo(o), o);
  assert.strictEqual(a.echo(err), err);
  const f = (): number => 1;
  assert.strictEqual(a.echo(f), f);
});

test("the answer's errors are rethrown by class, message and properties", () => {
  assert.throws(() => a.fail("type"), (e: unknown) => e instanceof TypeError && (e as Error).message === "not a number: x");
  assert.throws(() => a.fail("range"), (e: unknown) => e instanceof RangeError && String(e) === "RangeError: limit must be >= 1");
  assert.throws(() => a.fail("custom"), (e: unknown) => {
    assert.ok(e instanceof a.AnswerError, "instanceof the answer's own class");
    assert.ok(e instanceof Error);
    const x = e as { name: string; message: string; code: string };
    assert.equal(x.name, "AnswerError");
    assert.equal(x.message, "bad page 3");
    assert.equal(x.code, "E_PAGE");
    return true;
  });
  assert.throws(() => a.fail("other"), (e: unknown) => {
    assert.deepStrictEqual(e, { plain: "other" });
    return true;
  });
});

test("promises cross as promises, rejections keep the reason", async () => {
  const p = a.later(41);
  assert.ok(p instanceof Promise);
  assert.equal(await p, 41);
  const reason = { why: "mine" };
  await assert.rejects(a.rejectWith(reason), (e: unknown) => e === reason);
  let resolve!: (n: number) => void;
  const mine = new Promise<number>((r) => (resolve = r));
  const doubled = a.awaitThen(mine);
  resolve(21);
  assert.equal(await doubled, 42);
});

test("callbacks are served while the call waits, re-entrantly", () => {
  assert.equal(a.callBack((n) => n * 3, 4), 13);
  assert.equal(a.reenter((g) => g(2) + 1), 21);
});

test("objects are handles: methods, getters, state, classes", () => {
  const c = new a.Counter(5);
  assert.ok(c instanceof a.Counter);
  assert.equal(c.add(), 5);
  assert.equal(c.add(), 10);
  assert.equal(c.count, 10);
  assert.equal(c.double, 20);
  c.count = 1;
  assert.equal(c.add(), 6);
  assert.deepStrictEqual(Object.keys(c).sort(), ["count", "step"]);
});

test("a handle never equals a plain value", () => {
  const r = a.rigged();
  assert.notStrictEqual(r, 6);
  assert.ok(!(r == 6), "== with a rigged Symbol.toPrimitive");
  assert.ok(Number.isNaN(+(r as number)), "unary plus");
  assert.notDeepStrictEqual(r, { valueOf: 6 });
  assert.notDeepStrictEqual(new a.Point(1, 2), { x: 1, y: 2 });
});

test("the tests' process hands out no way to run code", () => {
  // A callback's constructor is the answer's own Function (or
  // AsyncFunction): what it makes runs in the answer's process.
  const plain = a.escape(() => 1);
  assert.ok(plain === "ran as 1000", plain);
  const asyncFn = a.escape(async () => 1);
  assert.equal(asyncFn, "ran as [object Promise]");
  class Fake {
    calls: number[] = [];
  }
  const fake = new Fake();
  // A callback's call is the answer's own, and so is the Function it
  // calls: what it makes runs as the command user (1000).
  assert.deepStrictEqual(a.forge(fake, () => 1), ["refused set", "refused proto", "made 1000"]);
  assert.deepStrictEqual(fake.calls, []);
  assert.ok(Object.getPrototypeOf(fake) === Fake.prototype);
});

test("async iteration over the answer's generator", async () => {
  const got: number[] = [];
  for await (const n of a.pages(4)) got.push(n);
  assert.deepStrictEqual(got, [0, 1, 2, 3]);
});

test("the answer's objects come back as the same handle", () => {
  const c = new a.Counter(1);
  assert.strictEqual(a.echo(c), c);
  assert.strictEqual(a.sharedCounter(), a.sharedCounter());
});

test("the answer holds only what the tests handed it", () => {
  class Fake {
    n = 0;
    twice(x: number): number {
      this.n++;
      return 2 * x;
    }
  }
  const fake = new Fake();
  const r = a.reach(fake, (x: number) => x * 2);
  // The builtins' methods of the tests' objects are the answer's own.
  assert.deepStrictEqual(r.own, ["__lookupGetter__ is its own", "__defineGetter__ is its own", "hasOwnProperty is its own", "call is its own"]);
  // So a trusted accessor cannot be had, nor applied to the tests' console.
  assert.deepStrictEqual(r.console, ["no stream"]);
  // A builtin of the tests' side is never the this of their function.
  assert.match(r.builtinThis, /^refused: evalctl: the tests' functions do not run with a builtin as this/);
  // What the tests handed works as in one process.
  assert.equal(r.method, 6);
  assert.equal(fake.n, 1);
  assert.equal(r.hasOwn, true);
});

const AggregateError = (globalThis as any).AggregateError;
type AggregateError = Error & { errors: any[] };

test("errors cross with their data, enumerable or not", async () => {
  await assert.rejects(a.anyOf([Promise.reject(new Error("x")), Promise.reject(new RangeError("y"))]), (e: unknown) => {
    assert.ok(e instanceof AggregateError);
    const errs = (e as AggregateError).errors;
    assert.equal(errs.length, 2);
    assert.ok(errs[1] instanceof RangeError && errs[1].message === "y");
    return true;
  });
  assert.throws(() => a.aggregate(), (e: unknown) => {
    assert.ok(e instanceof AggregateError);
    const x = e as AggregateError & { cause: unknown; code: number };
    assert.deepStrictEqual(x.errors.map((y: Error) => y.message), ["a", "b"]);
    assert.equal(x.cause, "why");
    assert.equal(x.code, 7);
    assert.deepStrictEqual(Object.keys(x), ["code"]);
    return true;
  });
});

test("what the answer changes in a container it was passed is changed", () => {
  const db = { users: [{ name: "A", balance: 0, owes: {} as Record<string, number> }, { name: "B", balance: 1.5, owes: {} }] };
  const api = new a.Ledger(db);
  assert.deepStrictEqual(api.pay("A", "B", 2.25), { users: [{ name: "A", balance: -2.25, owes: { B: 2.25 } }, { name: "B", balance: 3.75, owes: {} }] });
  assert.equal(db.users[0].balance, -2.25);
  const xs = [3, 1, 2];
  assert.strictEqual(a.sortInPlace(xs), xs);
  assert.deepStrictEqual(xs, [1, 2, 3]);
  const tree = { value: 1, left: { value: 2, right: { value: 3 } } };
  assert.strictEqual(a.setDeep(tree, 5), tree);
  assert.equal(tree.left.right.value, 5);
});

test("the tests' iterators and generators serve the answer", () => {
  function* gen(): Generator<number> {
    yield 1;
    yield 2;
  }
  assert.deepStrictEqual(a.drain(gen()), [1, 2]);
  assert.deepStrictEqual(a.drain(new Map([["k", 1]]).keys()), ["k"]);
  assert.deepStrictEqual(a.drain([4, 5].values()), [4, 5]);
});

test("a platform object the tests pass works in the answer: an AbortSignal's state, reason and listeners", () => {
  const c = new AbortController();
  assert.equal(a.abortState(c.signal), "false:undefined");
  let fired = 0;
  a.onAbort(c.signal, () => {
    fired++;
  });
  c.abort("stop");
  assert.equal(fired, 1);
  assert.equal(a.abortState(c.signal), "true:stop");
});
