const { describe, test, xtest, it, expect, beforeEach, afterAll } = require("/opt/evalctl/jest");
let n = 0;
beforeEach(() => { n++; });
describe("ok", () => {
  test("toBe", () => { expect(1).toBe(1); expect(1).not.toBe(2); });
  xtest("toEqual", () => { expect({a: 1, b: undefined}).toEqual({a: 1}); expect([1,[2]]).toEqual([1,[2]]); expect(NaN).toEqual(NaN); expect(0).not.toEqual(-0); });
  test("toStrictEqual", () => { expect({a: 1, b: undefined}).not.toStrictEqual({a: 1}); class A{constructor(){this.x=1}}; expect(new A()).not.toStrictEqual({x:1}); expect(new A()).toEqual({x:1}); });
  test("toThrow", () => { const f = () => { throw new RangeError("bad range"); }; expect(f).toThrow(); expect(f).toThrow("bad"); expect(f).toThrow(/range/); expect(f).toThrow(RangeError); expect(f).toThrow(new Error("bad range")); expect(() => 1).not.toThrow(); expect(f).not.toThrow(TypeError); });
  test("misc", () => { expect(0.1+0.2).toBeCloseTo(0.3); expect([1,2]).toContain(2); expect("abc").toContain("b"); expect([1,2]).toHaveLength(2); expect(1).toBeTruthy(); expect(0).toBeFalsy(); expect(null).toBeNull(); expect(undefined).toBeUndefined(); expect(1).toBeDefined(); expect("abc").toMatch(/b/); expect([{a:1}]).toContainEqual({a:1}); expect(new Map([[1,2]])).toEqual(new Map([[1,2]])); expect({a:1}).toEqual({a: expect.any(Number)}); });
  test("resolves", async () => { await expect(Promise.resolve(3)).resolves.toBe(3); await expect(Promise.reject(new Error("no"))).rejects.toThrow("no"); await expect(Promise.resolve(3)).resolves.not.toBe(4); });
  it("done", (done) => { setTimeout(() => done(), 5); });
});
describe("fails", () => {
  test("f1", () => { expect(1).toBe(2); });
  test("f2", () => { expect({a: 1}).toEqual({a: 2}); });
  test("f3", () => { expect(() => 1).toThrow(); });
  test("f4", async () => { await expect(Promise.resolve(1)).rejects.toThrow(); });
  test("f5", (done) => { setTimeout(() => done(new Error("x")), 5); });
  test("f6", () => { expect(1).not.toBe(1); });
  test("f7", async () => { await expect(Promise.reject(1)).resolves.toBe(1); });
});
describe("forged", () => {
  test("f8 Object.is replaced", () => { const orig = Object.is; Object.is = () => true; try { expect(1).toBe(2); } finally { Object.is = orig; } });
  test("f9 filter replaced", () => { const orig = Array.prototype.filter; Array.prototype.filter = function () { return []; }; try { expect({a: 1}).toEqual({a: 2, b: 3}); } finally { Array.prototype.filter = orig; } });
});
afterAll(() => { if (n !== 16) throw new Error("hooks ran " + n); });
