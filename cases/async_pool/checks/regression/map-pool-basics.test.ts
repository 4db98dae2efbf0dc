import { test } from "node:test";
import * as assert from "node:assert/strict";
import { mapPool } from "../../workspace/src/pool";

test("maps already-resolved calls to their results", async () => {
  const out = await mapPool([1, 2, 3, 4], 2, async (n) => n * 10);
  assert.deepStrictEqual(out, [10, 20, 30, 40]);
});

test("an empty list resolves with [] and never calls fn", async () => {
  let calls = 0;
  const out = await mapPool([] as string[], 4, async (s) => {
    calls++;
    return s;
  });
  assert.deepStrictEqual(out, []);
  assert.strictEqual(calls, 0);
});

test("fn receives each item's index", async () => {
  const out = await mapPool(["a", "b", "c"], 3, async (s, i) => `${s}${i}`);
  assert.deepStrictEqual(out, ["a0", "b1", "c2"]);
});

test("a failing call makes mapPool reject with its error", async () => {
  await assert.rejects(
    mapPool([1], 2, async () => {
      throw new Error("disk full");
    }),
    /disk full/,
  );
});

test("limit 1 runs the items and returns every result", async () => {
  const out = await mapPool(["x", "y", "z"], 1, async (s) => s.toUpperCase());
  assert.deepStrictEqual(out, ["X", "Y", "Z"]);
});
