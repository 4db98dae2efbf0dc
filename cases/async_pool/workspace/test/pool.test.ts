import { test } from "node:test";
import * as assert from "node:assert/strict";
import { mapPool } from "../src/pool";

test("maps every item through fn", async () => {
  const out = await mapPool([1, 2, 3], 2, async (n) => n * 2);
  assert.deepStrictEqual(out, [2, 4, 6]);
});

test("an empty list gives an empty result", async () => {
  const out = await mapPool([], 3, async (n: number) => n);
  assert.deepStrictEqual(out, []);
});

test("works one at a time with limit 1", async () => {
  const out = await mapPool(["a", "b"], 1, async (s, i) => `${i}:${s}`);
  assert.deepStrictEqual(out, ["0:a", "1:b"]);
});
