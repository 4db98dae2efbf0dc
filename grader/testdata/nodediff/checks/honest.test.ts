// The differential corpus (see workspace/src/honest.ts): node:test and
// node:assert, as the repository's own suites test.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as h from "../workspace/src/honest";

const wait = <T>(ms: number, v: T, fail = false): Promise<T> => new Promise((res, rej) => setTimeout(() => (fail ? rej(v) : res(v)), ms));

test("promisify resolves and rejects with the callback's values", async () => {
  const ok = h.promisify<string>((x, cb) => setTimeout(() => cb(null, String(x) + "!"), 1));
  assert.equal(await ok("a"), "a!");
  const boom = new Error("boom");
  const bad = h.promisify<string>((_x, cb) => setTimeout(() => cb(boom), 1));
  await assert.rejects(bad(1), (e) => e === boom);
});

test("all keeps order and rejects with the first rejection", async () => {
  assert.deepStrictEqual(await h.all([wait(5, 1), wait(1, 2), Promise.resolve(3)]), [1, 2, 3]);
  const e = new Error("second");
  await assert.rejects(h.all([wait(5, 1), wait(1, e, true)]), (x) => x === e);
});

test("any rejects with the array of every error", async () => {
  const e1 = new Error("one"), e2 = new TypeError("two");
  await assert.rejects(h.any([wait(2, e1, true), wait(1, e2, true)]), (x: unknown) => {
    assert.ok(Array.isArray(x));
    assert.strictEqual(x[0], e1);
    assert.strictEqual(x[1], e2);
    return true;
  });
  assert.equal(await h.any([wait(5, "slow"), wait(1, "fast")]), "fast");
});

test("the builtin Promise.any rejects with an AggregateError", async () => {
  const e1 = new Error("one");
  await assert.rejects(h.builtinAny([Promise.reject(e1), Promise.reject(2)]), (x: unknown) => {
    assert.ok(x instanceof AggregateError);
    assert.deepStrictEqual(x.errors, [e1, 2]);
    return true;
  });
});

test("allSettled and race", async () => {
  assert.deepStrictEqual(await h.settled([Promise.resolve(1), Promise.reject("no")]), [{ status: "fulfilled", value: 1 }, { status: "rejected", reason: "no" }]);
  assert.equal(await h.race([wait(10, "slow"), wait(1, "fast")]), "fast");
});

test("async iteration over the answer's generator", async () => {
  const got: number[] = [];
  for await (const n of h.countdown(3)) got.push(n);
  assert.deepStrictEqual(got, [3, 2, 1]);
  assert.deepStrictEqual(await h.collect(h.countdown(2)), [2, 1]);
});

test("the answer iterates the tests' generators", async () => {
  function* letters() {
    yield "a";
    yield "b";
    yield "c";
  }
  assert.deepStrictEqual(h.take(letters(), 2), ["a", "b"]);
  async function* nums() {
    yield 1;
    yield 2;
  }
  assert.deepStrictEqual(await h.collect(nums()), [1, 2]);
  assert.deepStrictEqual(h.take(h.fib(), 7), [0, 1, 1, 2, 3, 5, 8]);
});

test("identity holds both ways", () => {
  const o = { k: [1] }, f = () => 1, e = new RangeError("r");
  assert.strictEqual(h.identity(o), o);
  assert.strictEqual(h.identity(f), f);
  assert.strictEqual(h.identity(e), e);
  const [a, b] = h.pair(o);
  assert.strictEqual(a, b);
  const acct = new h.Account("x");
  assert.strictEqual(h.identity(acct), acct);
});

test("test doubles are called back and keep their records", () => {
  assert.deepStrictEqual(h.callEach([(n) => n + 1, (n) => n * 10], 4), [5, 40]);
  class Spy implements h.Listener {
    calls: string[] = [];
    onEvent(name: string, data: { n: number }): void {
      this.calls.push(`${name}:${data.n}`);
    }
  }
  const spy = new Spy();
  assert.equal(h.emit(spy, ["a", "b"]), 2);
  assert.deepStrictEqual(spy.calls, ["a:0", "b:1"]);
});

test("exceptions keep their class and attributes", () => {
  const acct = new h.Account("alice");
  acct.deposit(5);
  assert.throws(() => acct.withdraw(8), (e: unknown) => {
    assert.ok(e instanceof h.BalanceError);
    assert.ok(e instanceof Error);
    assert.equal(e.needed, 3);
    assert.equal(e.account, "alice");
    assert.equal(e.name, "BalanceError");
    assert.equal(e.message, "account alice needs 3 more");
    return true;
  });
  assert.throws(() => acct.deposit(-1), RangeError);
  assert.equal(acct.balance, 5);
  assert.throws(() => h.fail("string"), (e) => e === "just a string");
  assert.throws(() => h.fail("object"), (e) => {
    assert.deepStrictEqual(e, { code: 42, detail: [1, 2] });
    return true;
  });
  assert.throws(() => h.fail("cause"), (e: unknown) => e instanceof Error && e.cause instanceof TypeError && (e.cause as Error).message === "inner");
});

test("numeric edges cross exactly", () => {
  const n = h.numbers();
  assert.ok(Object.is(n.negZero, -0));
  assert.ok(Number.isNaN(n.nan));
  assert.equal(n.inf, -Infinity);
  assert.equal(n.big, 9007199254740992);
  assert.equal(n.tiny, 5e-324);
  assert.equal(n.sum, 0.30000000000000004);
  assert.equal(n.huge, 1180591620717411303424n);
  assert.ok(Object.is(h.half(-0), -0));
  assert.equal(h.half(Number.MAX_VALUE * 2), Infinity);
});

test("nested records with numeric balances are changed in place", () => {
  const db = { users: [{ name: "Adam", balance: 0, owes: {} }, { name: "Bob", balance: 1.5, owes: {} }] };
  const ledger = new h.Ledger(db);
  assert.deepStrictEqual(ledger.iou("Adam", "Bob", 2.25), { users: [{ name: "Adam", balance: 2.25, owes: {} }, { name: "Bob", balance: -0.75, owes: { Adam: 2.25 } }] });
  assert.deepStrictEqual(ledger.iou("Adam", "Bob", 1), { users: [{ name: "Adam", balance: 3.25, owes: {} }, { name: "Bob", balance: -1.75, owes: { Adam: 3.25 } }] });
  assert.equal(db.users[1].balance, -1.75);
});

test("passed-in containers changed in place", () => {
  const xs = [3, 1, 2];
  assert.equal(h.sortInPlace(xs), undefined);
  assert.deepStrictEqual(xs, [1, 2, 3]);
  const t = { left: { value: 1, right: { value: 2 } } };
  const right = t.left.right;
  assert.strictEqual(h.setLeaf(t, 5), t);
  assert.strictEqual(t.left.right, right);
  assert.equal(right.value, 5);
});

test("maps come back as maps", () => {
  assert.deepStrictEqual(h.counts(["a", "b", "a"]), new Map([["a", 2], ["b", 1]]));
});

test("an honest bug fails the same way", () => {
  assert.equal(h.lengthOf([]), 0);
});
