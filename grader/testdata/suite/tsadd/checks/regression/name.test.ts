import test from "node:test";
import assert from "node:assert/strict";
import { name } from "../../workspace/src/sum";

test("name stays", () => {
  assert.equal(name(), "tsadd");
});
