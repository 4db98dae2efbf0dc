// Tests that pass run in one process and that the node boundary cannot
// represent (its test processes mark them): a symbol of the tests' handed
// over, as an argument and as a callback's result; an array nested deeper
// than 200 levels; the tests' console inside a plain object. The last test
// reaches none of them and passes both ways.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as e from "../workspace/src/edges";

test("unrepresentable: a symbol as an argument", () => {
  assert.equal(e.symbolName(Symbol("blue")), "blue");
});

test("unrepresentable: a symbol a callback returns", () => {
  const s = Symbol("green");
  assert.deepStrictEqual(e.twice(() => s), [s, s]);
});

test("unrepresentable: an array 230 levels deep", () => {
  let xs: unknown[] = [];
  for (let i = 0; i < 229; i++) xs = [xs];
  assert.equal(e.depth(xs), 230);
});

test("unrepresentable: the console in an object", () => {
  assert.equal(e.logVia({ out: console }, "hi"), "function hi");
});

test("representable: an array 150 levels deep", () => {
  let xs: unknown[] = [];
  for (let i = 0; i < 149; i++) xs = [xs];
  assert.equal(e.depth(xs), 150);
});
