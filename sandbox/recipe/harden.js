// Loaded with --require in every node test process, before the tests and so
// before any code under test: the modules the checks assert with are frozen,
// so code under test cannot disarm them (replacing assert.equal with a
// function that does nothing, say). Assignments to them fail instead.
"use strict";
const seen = new Set();
function freeze(o) {
  if ((typeof o !== "object" && typeof o !== "function") || o === null || seen.has(o)) return;
  seen.add(o);
  Object.freeze(o);
  if (typeof o === "function" && o.prototype) Object.freeze(o.prototype);
}
for (const name of ["node:assert", "node:assert/strict", "node:test"]) {
  const m = require(name);
  for (const k of Object.getOwnPropertyNames(m)) {
    const d = Object.getOwnPropertyDescriptor(m, k);
    if (d && "value" in d) freeze(d.value);
  }
  freeze(m);
}
