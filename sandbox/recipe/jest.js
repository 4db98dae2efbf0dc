// A Jest-compatible layer over node:test and node:assert, for tests written
// for Jest (Exercism's JavaScript and TypeScript tracks): the image has no
// Jest and no npm registry to fetch it from. It is test-side code: an
// imported test file loads it with
//
//	import { describe, test, expect, ... } from "/opt/evalctl/jest";
//
// (written by 'evalctl cases import'; jest.d.ts beside it gives tsc the
// types), never the answer's code. It covers what Exercism's tests use:
// describe, test/it, xtest/xit and .skip/.only (all run: Exercism's own
// runner un-skips every test, and a skipped test would never count as
// passed), the four hooks, done callbacks, and the matchers toBe, toEqual,
// toStrictEqual, toThrow (toThrowError), toBeCloseTo, toContain,
// toContainEqual, toHaveLength, toBeTruthy, toBeFalsy, toBeNull,
// toBeUndefined, toBeDefined, toBeNaN, toMatch, toBeInstanceOf,
// toBeGreaterThan(OrEqual), toBeLessThan(OrEqual), with .not, .resolves and
// .rejects, and expect.any / expect.anything. What it lacks (mocks, timers,
// snapshots, .each) is refused at import time, naming the exercise.
"use strict";
const nt = require("node:test");
const { AssertionError } = require("node:assert");
const { inspect } = require("node:util");

// The built-ins the matchers judge with, taken before any code under test
// loads (this module is imported first), so that the answer cannot make
// toBe pass by replacing Object.is, say. (Code under test still shares
// this process; moving it out is the boundary's business.)
const apply = Reflect.apply;
const is = Object.is, keys = Object.keys, protoOf = Object.getPrototypeOf, isArray = Array.isArray;
const isNaN_ = Number.isNaN, abs = Math.abs, pow = Math.pow, from = Array.from;
const hasOwn = Object.prototype.hasOwnProperty, strIncludes = String.prototype.includes;
const reTest = RegExp.prototype.test, arrIncludes = Array.prototype.includes, arrSome = Array.prototype.some;
const includes = (s, x) => apply(strIncludes, s, [x]);
const matches = (re, s) => apply(reTest, re, [s]);
const show = (v) => inspect(v, { depth: 6, breakLength: Infinity });

class Asymmetric {
  constructor(name, match) {
    this.name = name;
    this.match = match;
  }
  [inspect.custom]() {
    return this.name;
  }
}

// equals is Jest's recursive equality: Object.is for primitives (so NaN
// equals NaN and 0 does not equal -0), own enumerable keys compared
// recursively; toEqual ignores properties whose value is undefined and
// the prototypes, toStrictEqual does not.
function equals(a, b, strict, seen = []) {
  if (a instanceof Asymmetric) return a.match(b);
  if (b instanceof Asymmetric) return b.match(a);
  if (is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  for (let i = 0; i < seen.length; i++) if (seen[i][0] === a && seen[i][1] === b) return true;
  seen = [...seen, [a, b]];
  if (isArray(a) !== isArray(b)) return false;
  if (strict && protoOf(a) !== protoOf(b)) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp && b instanceof RegExp) return String(a) === String(b);
  if (a instanceof Error && b instanceof Error && a.message !== b.message) return false;
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !equals(v, b.get(k), strict, seen)) return false;
    return true;
  }
  if (a instanceof Set && b instanceof Set) {
    if (a.size !== b.size) return false;
    for (const v of a) if (!b.has(v) && !apply(arrSome, from(b), [(w) => equals(v, w, strict, seen)])) return false;
    return true;
  }
  if (isArray(a) && a.length !== b.length) return false;
  const own = (o) => {
    const all = keys(o), out = [];
    for (let i = 0; i < all.length; i++) if (strict || o[all[i]] !== undefined) out[out.length] = all[i];
    return out;
  };
  const ka = own(a), kb = own(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!apply(hasOwn, b, [k]) || !equals(a[k], b[k], strict, seen)) return false;
  }
  return true;
}

// thrownMatches says whether err is what toThrow(expected) expects.
function thrownMatches(err, expected) {
  if (expected === undefined) return true;
  const msg = err !== null && typeof err === "object" && "message" in err ? String(err.message) : String(err);
  if (typeof expected === "string") return includes(msg, expected);
  if (expected instanceof RegExp) return matches(expected, msg);
  if (typeof expected === "function") return err instanceof expected;
  if (expected instanceof Error) return msg === expected.message;
  if (expected !== null && typeof expected === "object" && "message" in expected) return msg === String(expected.message);
  throw new TypeError("toThrow: expected a string, RegExp, error class or error, got " + show(expected));
}

const matchers = {
  toBe: (r, e) => [is(r, e), `expected ${show(r)} to be ${show(e)}`],
  toEqual: (r, e) => [equals(r, e, false), `expected ${show(r)} to equal ${show(e)}`],
  toStrictEqual: (r, e) => [equals(r, e, true), `expected ${show(r)} to strictly equal ${show(e)}`],
  toBeCloseTo: (r, e, digits = 2) => [
    typeof r === "number" && (r === e || abs(r - e) < pow(10, -digits) / 2),
    `expected ${show(r)} to be close to ${show(e)} (${digits} digits)`,
  ],
  toContain: (r, e) => [
    (typeof r === "string" && typeof e === "string" && includes(r, e)) ||
      (r != null && typeof r !== "string" && typeof r[Symbol.iterator] === "function" && apply(arrIncludes, from(r), [e])),
    `expected ${show(r)} to contain ${show(e)}`,
  ],
  toContainEqual: (r, e) => [
    r != null && typeof r[Symbol.iterator] === "function" && apply(arrSome, from(r), [(x) => equals(x, e, false)]),
    `expected ${show(r)} to contain an element equal to ${show(e)}`,
  ],
  toHaveLength: (r, n) => [r != null && r.length === n, `expected ${show(r)} to have length ${n} (it has ${r == null ? r : r.length})`],
  toBeTruthy: (r) => [!!r, `expected ${show(r)} to be truthy`],
  toBeFalsy: (r) => [!r, `expected ${show(r)} to be falsy`],
  toBeNull: (r) => [r === null, `expected ${show(r)} to be null`],
  toBeUndefined: (r) => [r === undefined, `expected ${show(r)} to be undefined`],
  toBeDefined: (r) => [r !== undefined, `expected ${show(r)} to be defined`],
  toBeNaN: (r) => [isNaN_(r), `expected ${show(r)} to be NaN`],
  toMatch: (r, e) => [
    typeof r === "string" && (e instanceof RegExp ? matches(e, r) : includes(r, String(e))),
    `expected ${show(r)} to match ${show(e)}`,
  ],
  toBeInstanceOf: (r, e) => [r instanceof e, `expected ${show(r)} to be an instance of ${e && e.name}`],
  toBeGreaterThan: (r, e) => [r > e, `expected ${show(r)} > ${show(e)}`],
  toBeGreaterThanOrEqual: (r, e) => [r >= e, `expected ${show(r)} >= ${show(e)}`],
  toBeLessThan: (r, e) => [r < e, `expected ${show(r)} < ${show(e)}`],
  toBeLessThanOrEqual: (r, e) => [r <= e, `expected ${show(r)} <= ${show(e)}`],
};

// Matchers taking a function to call (or, after .rejects, a reason).
function throwMatcher(received, expected, isReason) {
  if (isReason) {
    return [thrownMatches(received, expected), `expected the rejection ${show(received)} to match ${show(expected)}`];
  }
  if (typeof received !== "function") {
    throw new AssertionError({ message: `toThrow: expected a function, got ${show(received)}` });
  }
  try {
    received();
  } catch (err) {
    return [thrownMatches(err, expected), `expected the error thrown (${show(err)}) to match ${show(expected)}`];
  }
  return [false, `expected the function to throw${expected === undefined ? "" : " " + show(expected)}, it did not`];
}

function build(received, negate, mode) {
  const m = {};
  const check = ([pass, message], name) => {
    if (pass === negate) {
      throw new AssertionError({ message: (negate ? "not: " : "") + message, operator: name, stackStartFn: check });
    }
  };
  for (const [name, fn] of Object.entries({ ...matchers, toThrow: null, toThrowError: null })) {
    m[name] = (...args) => {
      const run = (value, isReason) => check(fn ? fn(value, ...args) : throwMatcher(value, args[0], isReason), name);
      if (mode === "resolves") {
        return Promise.resolve(received).then(
          (v) => run(v, false),
          (err) => {
            throw new AssertionError({ message: `expected the promise to resolve, it rejected with ${show(err)}` });
          });
      }
      if (mode === "rejects") {
        return Promise.resolve(received).then(
          (v) => {
            throw new AssertionError({ message: `expected the promise to reject, it resolved with ${show(v)}` });
          },
          (err) => run(err, true));
      }
      return run(received, false);
    };
  }
  return Object.freeze(m);
}

function expect(received) {
  const e = build(received, false, "");
  return Object.freeze({
    ...e,
    not: build(received, true, ""),
    resolves: Object.freeze({ ...build(received, false, "resolves"), not: build(received, true, "resolves") }),
    rejects: Object.freeze({ ...build(received, false, "rejects"), not: build(received, true, "rejects") }),
  });
}
expect.any = (ctor) => new Asymmetric(`Any<${ctor && ctor.name}>`, (v) =>
  v != null && (Object(v) instanceof ctor || (ctor === Number && typeof v === "number") ||
    (ctor === String && typeof v === "string") || (ctor === Boolean && typeof v === "boolean")));
expect.anything = () => new Asymmetric("Anything", (v) => v != null);

// body adapts a Jest test function: one taking a done callback finishes
// when done is called (done(err) or done.fail(err) fails it).
function body(fn) {
  if (typeof fn !== "function") throw new TypeError("a test needs a function");
  if (fn.length === 0) return () => fn();
  return () => new Promise((resolve, reject) => {
    const done = (err) => (err ? reject(err) : resolve());
    done.fail = (err) => reject(err || new Error("done.fail"));
    try {
      fn(done);
    } catch (err) {
      reject(err);
    }
  });
}

function test(name, fn, timeout) {
  return nt.it(String(name), timeout ? { timeout } : {}, body(fn));
}
test.skip = test;
test.only = test;

function describe(name, fn) {
  return nt.describe(String(name), () => {
    fn();
  });
}
describe.skip = describe;
describe.only = describe;

const hook = (h) => (fn, timeout) => h(body(fn), timeout ? { timeout } : {});

module.exports = Object.freeze({
  describe: Object.freeze(describe), xdescribe: describe,
  test: Object.freeze(test), it: test, xtest: test, xit: test, fit: test,
  expect: Object.freeze(expect),
  beforeEach: hook(nt.beforeEach), afterEach: hook(nt.afterEach),
  beforeAll: hook(nt.before), afterAll: hook(nt.after),
  equals,
});
