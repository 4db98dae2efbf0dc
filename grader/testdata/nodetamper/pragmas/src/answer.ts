// The honest answer: every test passes, the types check.
export function apply(f: (x: number) => number, x: number): number {
  return f(x);
}

export function total(src: { values(): number[] }): number {
  return src.values().reduce((s, x) => s + x, 0);
}
