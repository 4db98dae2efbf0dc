import { test } from "node:test";
import * as assert from "node:assert/strict";
import { mapPool } from "../../workspace/src/pool";
import { Controlled, flush, watch, withTimeout } from "./helpers";

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i * 10);

test("starts exactly limit calls before any call settles", async () => {
  const c = new Controlled<number>();
  const w = watch(mapPool(range(6), 3, c.fn));
  await flush();
  assert.deepStrictEqual(c.started, [0, 1, 2]);
  assert.strictEqual(w.state, "pending");
});

test("never has more than limit calls in flight", async () => {
  const c = new Controlled<number>();
  const result = withTimeout(mapPool(range(9), 3, c.fn));
  await flush();
  // Settle in a scrambled order, one at a time.
  for (const i of [1, 0, 4, 2, 3, 6, 8, 5, 7]) {
    c.resolve(i, i);
    await flush();
    assert.ok(c.active <= 3, `${c.active} calls in flight after settling item ${i}`);
  }
  await result;
  assert.strictEqual(c.maxActive, 3);
});

test("starts the next item as soon as a call settles", async () => {
  const c = new Controlled<number>();
  const w = watch(mapPool(range(5), 2, c.fn));
  await flush();
  assert.deepStrictEqual(c.started, [0, 1]);
  c.resolve(1, 1);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1, 2]);
  c.resolve(0, 0);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1, 2, 3]);
  assert.strictEqual(w.state, "pending");
});

test("starts items in index order", async () => {
  const c = new Controlled<string>();
  const result = withTimeout(mapPool(["a", "b", "c", "d", "e", "f"], 2, c.fn));
  await flush();
  for (const i of [1, 0, 3, 2, 5, 4]) {
    c.resolve(i, String(i));
    await flush();
  }
  await result;
  assert.deepStrictEqual(c.started, [0, 1, 2, 3, 4, 5]);
});

test("calls fn exactly once per item with the item and its index", async () => {
  const seen: Array<[string, number]> = [];
  const items = ["x", "y", "z", "x"];
  await withTimeout(
    mapPool(items, 2, async (item, index) => {
      seen.push([item, index]);
      return index;
    }),
  );
  seen.sort((a, b) => a[1] - b[1]);
  assert.deepStrictEqual(seen, [["x", 0], ["y", 1], ["z", 2], ["x", 3]]);
});

test("resolves results in input order when calls finish out of order", async () => {
  const c = new Controlled<string>();
  const result = withTimeout(mapPool(["a", "b", "c", "d", "e"], 5, c.fn));
  await flush();
  for (const i of [4, 2, 0, 3, 1]) {
    c.resolve(i, `r${i}`);
    await flush();
  }
  assert.deepStrictEqual(await result, ["r0", "r1", "r2", "r3", "r4"]);
});

test("handles a limit larger than the number of items", async () => {
  const c = new Controlled<number>();
  const result = withTimeout(mapPool(range(3), 50, c.fn));
  await flush();
  assert.deepStrictEqual(c.started, [0, 1, 2]);
  c.resolve(2, 2);
  c.resolve(0, 0);
  c.resolve(1, 1);
  assert.deepStrictEqual(await result, [0, 1, 2]);
});

test("rejects with the original rejection object, not a wrapper", async () => {
  const c = new Controlled<number>();
  const boom = new Error("boom");
  const w = watch(mapPool(range(2), 2, c.fn));
  await flush();
  c.reject(1, boom);
  c.resolve(0, 0);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.strictEqual(w.reason, boom);
});

test("passes a non-Error rejection value through unchanged", async () => {
  const c = new Controlled<number>();
  const reason = { code: "E_QUOTA", retryAfter: 30 };
  const w = watch(mapPool(range(1), 3, c.fn));
  await flush();
  c.reject(0, reason);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.strictEqual(w.reason, reason);
});

test("rejects without waiting for calls still in flight", async () => {
  const c = new Controlled<number>();
  const w = watch(mapPool(range(3), 3, c.fn));
  await flush();
  c.reject(2, new Error("boom"));
  await flush();
  // Items 0 and 1 are still in flight and never settle in this test.
  assert.strictEqual(w.state, "rejected");
});

test("starts no new item after a call rejects", async () => {
  const c = new Controlled<number>();
  const w = watch(mapPool(range(6), 2, c.fn));
  await flush();
  c.reject(0, new Error("first"));
  await flush();
  c.resolve(1, 1);
  await flush();
  await flush();
  assert.deepStrictEqual(c.started, [0, 1]);
  assert.strictEqual(w.state, "rejected");
});

test("ignores rejections after the first one", async () => {
  const c = new Controlled<number>();
  const first = new Error("first");
  const w = watch(mapPool(range(3), 3, c.fn));
  await flush();
  c.reject(1, first);
  await flush();
  const second = new Error("second");
  const third = new Error("third");
  c.reject(0, second);
  c.reject(2, third);
  // Give a leaked (unhandled) rejection time to be reported against this test.
  await flush();
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.notStrictEqual(w.reason, second, "a later rejection replaced the first");
  assert.notStrictEqual(w.reason, third, "a later rejection replaced the first");
});

test("treats a synchronous throw from fn as a rejection", async () => {
  const boom = new Error("sync boom");
  let pending: Promise<number[]> | undefined;
  assert.doesNotThrow(() => {
    pending = mapPool([1, 2, 3], 2, (item: number, index: number): Promise<number> => {
      if (index === 1) throw boom;
      return Promise.resolve(item);
    });
  });
  const w = watch(pending as Promise<number[]>);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.strictEqual(w.reason, boom);
});

function checkInvalidLimit(limit: number): () => Promise<void> {
  return async () => {
    let calls = 0;
    let pending: Promise<number[]> | undefined;
    assert.doesNotThrow(() => {
      pending = mapPool([1, 2], limit, async (n) => {
        calls++;
        return n;
      });
    }, `mapPool threw synchronously for limit ${limit}`);
    await assert.rejects(withTimeout(pending as Promise<number[]>), (err: unknown) => {
      assert.ok(err instanceof RangeError, `expected a RangeError for limit ${limit}, got ${String(err)}`);
      assert.match((err as RangeError).message, /limit/);
      return true;
    });
    assert.strictEqual(calls, 0, `fn was called for limit ${limit}`);
  };
}

test("rejects a limit of 0 with a RangeError", checkInvalidLimit(0));

test("rejects a negative limit with a RangeError", async () => {
  await checkInvalidLimit(-1)();
  await checkInvalidLimit(-4)();
});

test("rejects a non-integer limit with a RangeError", async () => {
  await checkInvalidLimit(1.5)();
  await checkInvalidLimit(NaN)();
  await checkInvalidLimit(Infinity)();
});
