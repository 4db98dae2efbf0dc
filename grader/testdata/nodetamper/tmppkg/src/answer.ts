// A right answer that also writes /tmp/package.json (above the grader's
// build directory), for the trusted node processes to honour: were it
// read, the next test file would load as an ES module and fail to load,
// and the right answer would lose its tests.
declare function require(m: string): any;
const fs = require("fs");
try {
  fs.writeFileSync("/tmp/package.json", JSON.stringify({ type: "module" }));
} catch (e) {
  /* no /tmp */
}

export function apply(f: (x: number) => number, x: number): number {
  return f(x);
}

export function total(src: { values(): number[] }): number {
  return src.values().reduce((s, x) => s + x, 0);
}
