import test from "node:test";
import assert from "node:assert/strict";
import { sum } from "../../workspace/src/sum";

test("sums all", () => {
  assert.equal(sum([1, 2, 3]), 6);
});

test("sums fractions", () => {
  assert.equal(sum([0.5, 0.25]), 0.75);
});

test("empty is zero", () => {
  assert.equal(sum([]), 0);
});
