// What the node boundary cannot carry from the tests' side (see
// checks/unrepresentable.test.ts): honest functions whose tests pass run
// in one process.
export function symbolName(s: symbol): string {
  return s.description ?? "";
}

export function depth(xs: unknown): number {
  let d = 0;
  while (Array.isArray(xs)) {
    d++;
    xs = xs[0];
  }
  return d;
}

export function logVia(o: { out: { log(...a: unknown[]): void } }, msg: string): string {
  return typeof o.out.log + " " + msg;
}

export function twice(f: () => unknown): unknown[] {
  return [f(), f()];
}
