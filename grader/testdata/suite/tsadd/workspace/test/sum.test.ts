import test from "node:test";
import assert from "node:assert/strict";
import { name } from "../src/sum";

test("name", () => {
  assert.equal(name(), "tsadd");
});
