export function add(a: number, b: number): number {
  throw new Error("not implemented");
}

export function symbolName(s: symbol): string {
  throw new Error("not implemented");
}

export function depth(xs: unknown): number {
  throw new Error("not implemented");
}

export function kindOf(v: unknown): string {
  throw new Error("not implemented");
}
