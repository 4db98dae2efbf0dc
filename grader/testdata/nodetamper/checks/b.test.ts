// A second test file: node runs it in a process of its own, after the
// answer has run in the first one.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { total } from "../workspace/src/answer";

test("sums again", () => {
  assert.equal(total({ values: () => [4, 5] }), 9);
});
