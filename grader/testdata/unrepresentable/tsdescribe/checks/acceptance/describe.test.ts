// Run in one process, all four pass with the reference. Through the node
// boundary, the last three hand the answer what it cannot carry: a symbol
// of the tests', an array nested 250 levels deep (deeper than 200) and the
// tests' console (never handed out): their failures are the boundary's,
// not the answer's. Written for the Jest layer, as imported tests are.
import { describe, test, expect } from "/opt/evalctl/jest";
import { add, symbolName, depth, kindOf } from "../../workspace/src/describe";

describe("describe", () => {
  test("adds", () => {
    expect(add(2, 3)).toBe(5);
  });

  test("names a symbol", () => {
    expect(symbolName(Symbol("red"))).toBe("red");
  });

  test("measures depth", () => {
    let xs: unknown[] = [];
    for (let i = 0; i < 249; i++) xs = [xs];
    expect(depth(xs)).toBe(250);
  });

  test("knows the console", () => {
    expect(kindOf(console)).toBe("object");
  });
});
