export function add(a: number, b: number): number {
  return a + b;
}

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

export function kindOf(v: unknown): string {
  return typeof v;
}
