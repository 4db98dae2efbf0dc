// The node tamper rows' checks (grader/nodetamper_test.go): they hand the
// answer a callback and a fake, as real tests do, so a cheat has the
// tests' objects to start from.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { apply, total } from "../workspace/src/answer";

test("applies the callback", () => {
  assert.equal(apply((x: number) => x + 1, 1), 2);
});

test("sums a fake's values", () => {
  class Source {
    values(): number[] {
      return [1, 2, 3];
    }
  }
  assert.equal(total(new Source()), 6);
});
